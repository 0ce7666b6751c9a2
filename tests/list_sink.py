"""A sink that keeps what a dataflow writes in a list, on either engine (bytewax's `TestingSink` exists on bytewax only)."""

from __future__ import annotations

from typing import Any

from fairstream.engine.api import DynamicSink, StatelessSinkPartition


class _Appending(StatelessSinkPartition):
    def __init__(self, items: list[Any]):
        self._items = items

    def write_batch(self, items: list[Any]) -> None:
        self._items.extend(items)


class ListSink(DynamicSink):
    """Every item written, appended to `items` in the order written."""

    def __init__(self, items: list[Any]):
        self._items = items

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _Appending:
        return _Appending(self._items)
