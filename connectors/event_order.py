"""A file read in event-time order: a file is bounded, so it is sorted before it is streamed (in memory, or as sorted
runs spilled to disk and merged), and an unsorted file gives exactly the records of the same file sorted.

Lateness is the contract of an unbounded stream; a file has no reason to lose rows to it. Each record keeps its line
number in the file (its offset), so a dead letter still points at the row as the file holds it.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import operator
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson

from fairstream.connectors.files import jsonl_blocks
from fairstream.language.stream import InputSchema
from fairstream.reading.parse import field_getter
from fairstream.records.events import split_lines
from fairstream.records.timefmt import time_parser

_TIME = operator.attrgetter("time")

UNREADABLE = float("-inf")
"""The sort key of a record whose event time cannot be read: it goes first, and the parser dead-letters it with the reason."""

MAX_IN_MEMORY = 1_000_000
"""Records sorted in memory at once; a longer file is sorted in runs of this many, spilled to disk and merged."""

Positioned = tuple[int, Any]
"""A record with its position in the file: (line index, payload)."""


def _time_decoder(schema: InputSchema) -> msgspec.json.Decoder:
    """A decoder of a JSON record's time field alone (a plain field name), the rest skipped; decoded JSON holds no
    reference cycle, so the garbage collector need not track what it makes."""
    return msgspec.json.Decoder(msgspec.defstruct("EventTime", [("time", object, msgspec.field(name=schema.time))], gc=False))


def time_reader(schema: InputSchema) -> Callable[[Any], float]:
    """The event time (epoch ms) of a raw record, a JSON line or a CSV row, as the spec's input section reads it;
    `UNREADABLE` where it cannot be read."""
    get, parse = field_getter(schema.time), time_parser(schema.time_format)
    if "." not in schema.time:  # a JSON line's time field alone, decoded by msgspec without the rest of the record
        decode = _time_decoder(schema).decode
    else:
        decode = None

    def time_of(payload: Any) -> float:
        try:
            if isinstance(payload, dict):
                return parse(get(payload))
            if decode is not None:
                return parse(decode(payload).time)
            record = orjson.loads(payload)
            return parse(get(record)) if isinstance(record, dict) else UNREADABLE
        except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):  # orjson's decode error is a ValueError
            return UNREADABLE

    return time_of


MAX_BYTES_HELD = 256 << 20
"""Memory the order check of a job's JSON-lines files keeps their first blocks in, with their times, for the run."""

TIME_BYTES = 40
"""Memory a line's event time takes where it is kept (a Python int and its place in a list)."""

TimedBlock = tuple[bytes, list[int] | None]
"""A block of whole lines (see `jsonl_blocks`) with its lines' event times where they were read at once, else None."""


def blocks_in_order(path: str | Path, schema: InputSchema, *, max_held: int = MAX_BYTES_HELD) -> Callable[[], Iterator[TimedBlock]] | None:
    """A factory of a JSON-lines file's blocks if the file is in event-time order already (ties and all, a line whose
    time cannot be read counting as earliest: `time_ordered` would give its lines as they are), else None.

    Each block is decoded at once, the time fields alone (a block with a line that is no such record, line by line).
    The first `max_held` bytes read for the check are kept, with their lines' times, for the factory's first read,
    which reads the rest from the file: a file read once is not read twice."""
    time_of = time_reader(schema)
    decode_lines = None
    if "." not in schema.time:
        decode_lines = _time_decoder(schema).decode_lines
    parse = time_parser(schema.time_format)
    latest: float = UNREADABLE
    held: list[TimedBlock] = []
    held_bytes, holding = 0, True
    for text in jsonl_blocks(path)():
        times = None if decode_lines is None else _block_times(text, decode_lines, parse)
        every = times if times is not None else list(map(time_of, split_lines(text)))
        if every[0] < latest or every != sorted(every):
            return None
        latest = every[-1]
        holding = holding and held_bytes + len(text) + TIME_BYTES * len(every) <= max_held  # a prefix of the file
        if holding:
            held.append((text, times))
            held_bytes += len(text) + TIME_BYTES * len(every)
    return _replay(held, path)


def _replay(held: list[TimedBlock], path: str | Path) -> Callable[[], Iterator[TimedBlock]]:
    """The held blocks, handed over by the first read (and let go as they go), then the file from where they end; a
    later read reads the whole file."""
    held_size = sum(len(text) for text, _ in held)
    kept = collections.deque(held)
    reads = itertools.count()

    def blocks() -> Iterator[TimedBlock]:
        start = 0
        if next(reads) == 0:
            while kept:
                yield kept.popleft()
            start = held_size
        for text in jsonl_blocks(path, start)():
            yield text, None

    return blocks


def _block_times(text: bytes, decode_lines: Callable[[bytes], list[Any]], parse: Callable[[object], int]) -> list[int] | None:
    """The event times of a block of JSON lines decoded at once; None where one of them cannot be read so (a blank
    line, which the decoder would pass over, among them)."""
    try:
        decoded = decode_lines(text)
        if len(decoded) != text.count(b"\n"):
            return None
        return list(map(parse, map(_TIME, decoded)))
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return None


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
            in_order, latest = True, UNREADABLE
            for index, payload in enumerate(open_records()):
                if len(chunk) >= max_in_memory:  # only where more records follow: the last chunk stays in memory
                    runs.append(_spill(chunk if in_order else sorted(chunk), Path(scratch) / f"{len(runs)}.run"))
                    chunk, in_order, latest = [], True, UNREADABLE
                time = time_of(payload)
                in_order = in_order and time >= latest
                latest = time
                chunk.append((time, index, payload))  # (time, line index) is unique: tuples compare without the payload
            if not in_order:
                chunk.sort()
            merged = heapq.merge(*map(_read_run, runs), chunk) if runs else chunk
            for _time, index, payload in merged:
                yield index, payload

    return ordered


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
