"""A sink that only counts what reaches it, so a benchmark's output costs nothing and holds nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from fairstream.engine.api import DynamicSink, StatelessSinkPartition

Tally = Callable[[Counter, Any], None]
"""Adds one item to the counters."""


class _CountingPartition(StatelessSinkPartition[Any]):
    def __init__(self, counts: Counter, tally: Tally):
        self._counts = counts
        self._tally = tally

    def write_batch(self, items: list[Any]) -> None:
        counts, tally = self._counts, self._tally
        for item in items:
            tally(counts, item)


class CountingSink(DynamicSink[Any]):
    """Every worker adds to the same `counts` (read it after `run_main`); `tally` says what each item adds."""

    def __init__(self, tally: Tally):
        self.counts: Counter = Counter()
        self._tally = tally

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _CountingPartition:
        return _CountingPartition(self.counts, self._tally)
