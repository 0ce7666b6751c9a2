"""A file read in event-time order: a file is bounded, so it is sorted before it is streamed (in memory, or as sorted
runs spilled to disk and merged), and an unsorted file gives exactly the records of the same file sorted.

Lateness is the contract of an unbounded stream; a file has no reason to lose rows to it. Each record keeps its line
number in the file (its offset), so a dead letter still points at the row as the file holds it.
"""

from __future__ import annotations

import heapq
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from fairstream.language.stream import InputSchema
from fairstream.reading.parse import field_getter
from fairstream.records.timefmt import time_parser

UNREADABLE = float("-inf")
"""The sort key of a record whose event time cannot be read: it goes first, and the parser dead-letters it with the reason."""

MAX_IN_MEMORY = 1_000_000
"""Records sorted in memory at once; a longer file is sorted in runs of this many, spilled to disk and merged."""

Positioned = tuple[int, Any]
"""A record with its position in the file: (line index, payload)."""


def time_reader(schema: InputSchema) -> Callable[[Any], float]:
    """The event time (epoch ms) of a raw record, a JSON line or a CSV row, as the spec's input section reads it;
    `UNREADABLE` where it cannot be read."""
    get, parse = field_getter(schema.time), time_parser(schema.time_format)

    def time_of(payload: Any) -> float:
        try:
            record = payload if isinstance(payload, dict) else orjson.loads(payload)
            return parse(get(record)) if isinstance(record, dict) else UNREADABLE
        except (TypeError, ValueError, OverflowError):  # orjson's decode error is a ValueError
            return UNREADABLE

    return time_of


def time_ordered(
    open_records: Callable[[], Iterable[Any]], time_of: Callable[[Any], float], *, max_in_memory: int = MAX_IN_MEMORY
) -> Callable[[], Iterator[Positioned]]:
    """A factory of `open_records`' records in event-time order, ties in file order, each with its line index.

    >>> rows = [{"t": 3}, {"t": 1}, {"t": 2}, {"t": 1}]
    >>> [index for index, _ in time_ordered(lambda: rows, lambda row: row["t"])()]
    [1, 3, 2, 0]
    """

    def ordered() -> Iterator[Positioned]:
        with tempfile.TemporaryDirectory(prefix="fairstream-sort-") as scratch:
            runs: list[Path] = []
            chunk: list[tuple[float, int, Any]] = []
            for index, payload in enumerate(open_records()):
                chunk.append((time_of(payload), index, payload))
                if len(chunk) >= max_in_memory:
                    runs.append(_spill(sorted(chunk, key=_order), Path(scratch) / f"{len(runs)}.run"))
                    chunk = []
            chunk.sort(key=_order)
            merged = heapq.merge(*map(_read_run, runs), chunk, key=_order) if runs else chunk
            for _time, index, payload in merged:
                yield index, payload

    return ordered


def _order(entry: tuple[float, int, Any]) -> tuple[float, int]:
    return entry[0], entry[1]


def _spill(entries: list[tuple[float, int, Any]], path: Path) -> Path:
    with path.open("wb") as handle:
        for entry in entries:
            pickle.dump(entry, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _read_run(path: Path) -> Iterator[tuple[float, int, Any]]:
    with path.open("rb") as handle:
        while True:
            try:
                yield pickle.load(handle)
            except EOFError:
                return
