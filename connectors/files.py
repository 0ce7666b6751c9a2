"""File edges: a resumable source over JSON-lines, CSV or in-memory records, and a JSON-lines directory sink whose
dead-letter file has a size cap."""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from fairstream import metrics
from fairstream.connectors.retention.rotating import LinesFile, Rotation
from fairstream.engine.api import FixedPartitionedSink, FixedPartitionedSource, StatefulSourcePartition
from fairstream.language.table import ROW
from fairstream.process.lifecycle import stop_requested
from fairstream.records import wire
from fairstream.records.csvrows import CsvTable
from fairstream.records.errors import ConnectorError, InputError
from fairstream.records.events import LineBlock, RawRecord, Unreadable, split_lines

OUTPUT_FILES = ("alerts.jsonl", "dead_letters.jsonl", "decisions_shielded.jsonl", "estimates.jsonl", "seals.jsonl")
"""The files `fairstream run` writes, records routed to them by type (sorted: bytewax indexes partitions in name order)."""

DEAD_LETTERS = "dead_letters.jsonl"

_CHUNK = 1 << 20
"""Bytes a JSON-lines file is read in: its lines are split from each chunk at once."""

_new_record = tuple.__new__
_FILE_OF_TYPE = {
    "fairness.estimate": "estimates.jsonl",
    "shield.status": "estimates.jsonl",
    "pipeline.dead_letter": DEAD_LETTERS,
    "shield.decision": "decisions_shielded.jsonl",
    "pipeline.seal": "seals.jsonl",
}
log = logging.getLogger("fairstream.files")


def file_of(record: dict[str, Any]) -> str:
    """The output file a record is written to, by its type."""
    return _FILE_OF_TYPE.get(record.get("type"), "alerts.jsonl")  # type: ignore[arg-type]


class FileEncoder:
    """Routes each output record to its file as one JSON line (a shielded decision as the decision record itself).

    Dead letters stop being written once this process has put `max_dead_letter_bytes` in the dead-letter file (what an
    earlier execution of a resumed run wrote there counts too): past the cap they are counted, in the run's summary
    and metrics, but not written, so a flood of bad records cannot fill the disk.
    """

    def __init__(self, out_dir: str | Path, max_dead_letter_bytes: int):
        existing = Path(out_dir) / DEAD_LETTERS
        self.cap = max_dead_letter_bytes
        self.room = max_dead_letter_bytes - (existing.stat().st_size if existing.exists() else 0)
        self.full = False
        self._lock = threading.Lock()  # the worker threads of a process share the encoder

    def __call__(self, record: dict[str, Any]) -> tuple[str, str] | None:
        kind = record["type"]
        name = file_of(record)
        encoded = wire.encode_decision(record) if kind == "shield.decision" else wire.encode(record)
        if name == DEAD_LETTERS:
            with self._lock:
                if self.full or len(encoded) + 1 > self.room:
                    if not self.full:
                        self.full = True
                        log.warning("%s reached dead_letters.max_file_bytes (%s): further dead letters are counted, not written", DEAD_LETTERS, f"{self.cap:,}")
                    metrics.dead_letter_unwritten()
                    return None
                self.room -= len(encoded) + 1
        return name, encoded.decode()


class _RecordPartition(StatefulSourcePartition[RawRecord, int]):
    def __init__(self, partition: int, records: Iterator[Any], start: int, batch_size: int, positioned: bool):
        self._partition = partition
        self._records = itertools.islice(records, start, None)
        self._offset = start
        self._batch_size = batch_size
        self._positioned = positioned

    def next_batch(self) -> list[RawRecord]:
        if stop_requested():
            raise StopIteration
        partition, start = self._partition, self._offset
        payloads = list(itertools.islice(self._records, self._batch_size))
        if not payloads:
            raise StopIteration
        self._offset += len(payloads)
        if self._positioned:  # (line index, payload): the record keeps its place in the file as its offset
            return [_new_record(RawRecord, (partition, offset, payload, "")) for offset, payload in payloads]
        return [_new_record(RawRecord, (partition, offset, payload, "")) for offset, payload in zip(range(start, self._offset), payloads)]

    def snapshot(self) -> int:
        return self._offset


def _timed(block: bytes | tuple[bytes, list[int] | None]) -> tuple[bytes, list[int] | None]:
    """A block of lines, with its lines' event times where its reader gave them."""
    return (block, None) if type(block) is bytes else block  # type: ignore[return-value]


class _BlockPartition(StatefulSourcePartition[RawRecord, int]):
    """A JSON-lines file read a block of whole lines at a time, each batch one `LineBlock`; its state is the lines read."""

    def __init__(self, partition: int, blocks: Iterator[bytes | tuple[bytes, list[int] | None]], start: int):
        self._partition = partition
        self._blocks = blocks
        self._offset = 0
        self._skip = start

    def next_batch(self) -> LineBlock:
        if stop_requested():
            raise StopIteration
        text, times = _timed(next(self._blocks))
        while self._skip:  # resumed: the lines read before are passed over
            count = text.count(b"\n")
            if count > self._skip:
                cut = -1
                for _ in range(self._skip):
                    cut = text.index(b"\n", cut + 1)
                text, times = text[cut + 1 :], None if times is None else times[self._skip :]
                self._offset, self._skip = self._offset + self._skip, 0
                break
            self._offset += count
            self._skip -= count
            text, times = _timed(next(self._blocks))
        block = LineBlock(self._partition, self._offset, text, times)
        self._offset += len(block)
        return block

    def snapshot(self) -> int:
        return self._offset


class RecordSource(FixedPartitionedSource[RawRecord, int]):
    """Input partitions over the records each factory yields (one factory: one partition), parts named
    `<partition>-<name>`; a resume skips the records already read. `positioned`: the factories yield (offset, payload)
    pairs (a file read in event-time order, see `event_order`), else each record's offset is its position. `blocks`: the
    factories yield blocks of whole JSON lines (`jsonl_blocks`, or with their lines' event times: `blocks_in_order`),
    each batch one `LineBlock` for a parser that decodes blocks."""

    def __init__(
        self,
        open_records: Callable[[], Iterable[Any]] | Sequence[Callable[[], Iterable[Any]]],
        *,
        names: Sequence[str] | None = None,
        batch_size: int = 5000,
        positioned: bool = False,
        blocks: bool = False,
    ):
        self._blocks = blocks and not positioned
        self._factories = [open_records] if callable(open_records) else list(open_records)
        self._positioned = positioned
        self._names = list(names) if names is not None else ["records"] * len(self._factories)
        self._batch_size = batch_size

    def list_parts(self) -> list[str]:
        return [f"{partition}-{name}" for partition, name in enumerate(self._names)]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _RecordPartition:
        partition = int(for_part.split("-", 1)[0])
        records = iter(self._factories[partition]())
        if self._blocks:
            return _BlockPartition(partition, records, resume_state or 0)  # type: ignore[return-value]
        return _RecordPartition(partition, records, resume_state or 0, self._batch_size, self._positioned)


def _existing(path: str | Path) -> Path:
    """The input path, where it is a file to read: a regular file, or a named pipe (read as its writer sends)."""
    path = Path(path)
    if not path.exists() or path.is_dir():
        raise InputError(f"input file not found: {path}")
    return path


def jsonl_lines(path: str | Path) -> Callable[[], Iterator[bytes]]:
    """Opens the file on each call and yields its lines as bytes, without their line ending (as a replay sends them);
    a blank line is a record too, which the parser dead-letters, so nothing in the input goes uncounted."""
    blocks = jsonl_blocks(path)

    def lines() -> Iterator[bytes]:
        for text in blocks():
            yield from split_lines(text)

    return lines


def jsonl_blocks(path: str | Path, start: int = 0) -> Callable[[], Iterator[bytes]]:
    """Opens the file on each call and yields its text from byte `start` (a line's first) in blocks of whole lines,
    each line ending in a newline (the last given one where the file has none): `jsonl_lines`' lines, not yet split."""
    path = _existing(path)

    def blocks() -> Iterator[bytes]:
        with path.open("rb") as handle:
            if start:  # a named pipe is read from its start only
                handle.seek(start)
            rest = b""
            while chunk := handle.read1(_CHUNK):  # a named pipe: what its writer has sent so far
                text = rest + chunk
                end = text.rfind(b"\n") + 1
                rest = text[end:]
                if end:
                    yield text[:end]
            if rest:
                yield rest + b"\n"

    return blocks


def numbered_rows(open_records: Callable[[], Iterable[Any]]) -> Callable[[], Iterator[Any]]:
    """The rows of a plain table, each (a dict, or a JSON object's text) with its number in `ROW`: its trial's key and
    time (see `language.table`); a line that is no JSON object is passed on as it is, for the parser to dead-letter."""

    def rows() -> Iterator[Any]:
        for index, row in enumerate(open_records()):
            if isinstance(row, Unreadable):
                yield row
                continue
            if not isinstance(row, dict):
                try:
                    row = orjson.loads(row)
                except orjson.JSONDecodeError:
                    yield row
                    continue
            yield {**row, ROW: index} if isinstance(row, dict) else row

    return rows


def csv_rows(path: str | Path, columns: list[str] | None = None) -> Callable[[], Iterator[dict[str, str] | Unreadable]]:
    """Opens the file on each call and yields its rows as dicts of strings, named by its header line (or by `columns`
    for a file without one); a row that cannot be read is an `Unreadable`, which the parser dead-letters (see
    `records.csvrows`)."""
    path = _existing(path)

    def rows() -> Iterator[dict[str, str] | Unreadable]:
        with path.open("rb") as handle:
            yield from CsvTable(handle, columns, source=path)

    return rows


def csv_header(path: str | Path) -> list[str]:
    """The column names on a CSV file's header line."""
    path = _existing(path)
    with path.open("rb") as handle:
        return CsvTable(handle, source=path).header


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write records as JSON lines to `path` in one pass (nothing held in memory); return how many were written."""
    count = 0
    try:
        with Path(path).open("wb") as handle:
            for record in records:
                handle.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
                count += 1
    except OSError as err:
        raise ConnectorError(f"cannot write {path}: {err.strerror}") from None
    return count


def output_sink(out_dir: str | Path, rotation: Rotation | None = None) -> OutputSink:
    """One JSON-lines file per record family in `out_dir` (rotated into segments with a `rotation`); items are `(file name, line)`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return OutputSink(out_dir, rotation)


class OutputSink(FixedPartitionedSink[str, Any]):
    """The output files, one partition each: as bytewax's `DirSink` (each file cut back to its snapshot's length on a
    resume, so a resumed run repeats nothing), but a write that fails (a full disk, a file system turned read-only)
    ends the run with one line naming the file and the cause, and a resume from the last snapshot is left intact."""

    def __init__(self, out_dir: Path, rotation: Rotation | None = None):
        self._out_dir = out_dir
        self._rotation = rotation

    def list_parts(self) -> list[str]:
        return list(OUTPUT_FILES)

    def part_fn(self, item_key: str) -> int:
        return OUTPUT_FILES.index(item_key)

    def build_part(self, step_id: str, for_part: str, resume_state: Any) -> LinesFile:
        return LinesFile(self._out_dir / for_part, resume_state, self._rotation)
