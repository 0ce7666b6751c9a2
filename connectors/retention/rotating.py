"""An output file appended a batch at a time, optionally rotated into segments by wall-clock time, its segments older
than the retention removed and stated (see `segments`)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from fairstream.engine.api import StatefulSinkPartition
from fairstream.records.errors import ConnectorError
from fairstream.records.segments import SEGMENTS, STATEMENTS, Statement, segment_path, segments_of, spans


@dataclass(frozen=True)
class Rotation:
    """Rotate each output file every `every_s` seconds of wall-clock time; remove a segment `retention_s` after its last write."""

    every_s: float
    retention_s: float


def _counted(lines: Iterable[bytes], count: list[int]) -> Iterator[dict[str, Any]]:
    """The records of a file's lines, their number kept in `count[0]`."""
    for line in lines:
        if line.strip():
            count[0] += 1
            yield orjson.loads(line)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class LinesFile(StatefulSinkPartition[str, Any]):
    """One output file, appended with unbuffered writes and synced: nothing is left in a buffer to be written (or to
    fail) later. Its snapshot is its length, and with a rotation (segment, length): a resume moves back a segment
    rotated after the snapshot, so the records written since are written again, once."""

    def __init__(self, path: Path, state: int | tuple[int, int] | None, rotation: Rotation | None = None, clock=time.time):  # noqa: ANN001
        self._path, self._rotation, self._clock = path, rotation, clock
        self._segment, length = (0, state or 0) if not isinstance(state, (tuple, list)) else state
        if rotation is not None:
            self._restore()
        with _writing(path):
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.ftruncate(self._fd, length)
        self._started = clock()

    def _restore(self) -> None:
        """Segments after the snapshot's are undone: the snapshot's own goes back to being the live file."""
        out_dir, name = self._path.parent, self._path.name
        for number, path in segments_of(out_dir, name):
            if number == self._segment:
                os.replace(path, self._path)
            elif number > self._segment:
                path.unlink()

    def write_batch(self, items: list[str]) -> None:
        if self._rotation is not None and self._clock() - self._started >= self._rotation.every_s and os.fstat(self._fd).st_size:
            self._rotate()
        data = memoryview("".join(f"{item}\n" for item in items).encode())
        with _writing(self._path):
            while data:
                data = data[os.write(self._fd, data) :]
            os.fsync(self._fd)

    def _rotate(self) -> None:
        """The live file becomes segment n, a new live file n + 1; then the segments past the retention go."""
        assert self._rotation is not None
        with _writing(self._path):
            os.close(self._fd)
            target = segment_path(self._path.parent, self._path.name, self._segment)
            target.parent.mkdir(exist_ok=True)
            os.replace(self._path, target)
            self._segment += 1
            self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self._started = self._clock()
            self._expire()

    def _expire(self) -> None:
        """Remove each segment whose last write is older than the retention, its statement written (and synced) first."""
        assert self._rotation is not None
        now = self._clock()
        for number, path in segments_of(self._path.parent, self._path.name):
            written = path.stat().st_mtime
            if now - written < self._rotation.retention_s:
                break  # the segments after it were written later still
            with path.open("rb") as segment:  # read a line at a time: a segment may hold a day of estimates
                records = [0]
                held = spans(_counted(segment, records))
            statement = Statement(
                file=self._path.name, segment=number, records=records[0], retention_s=round(self._rotation.retention_s),
                removed_at=_iso(now), last_written_at=_iso(written), spans=held,
            )  # fmt: skip
            with (self._path.parent / SEGMENTS / STATEMENTS).open("ab") as handle:
                handle.write(statement.model_dump_json().encode() + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            path.unlink()

    def snapshot(self) -> int | tuple[int, int]:
        length = os.fstat(self._fd).st_size
        return length if self._rotation is None else (self._segment, length)

    def close(self) -> None:
        os.close(self._fd)


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    try:
        yield
    except OSError as err:
        raise ConnectorError(
            f"cannot write {path}: {err.strerror}; free space or make it writable, then run again "
            "(with the same --recovery the run goes on from its last snapshot, its records as if never stopped)"
        ) from None
