"""A source whose partitions do their share of the work where they are read: each wraps a source partition with a
`PartitionTrials` (or a `PartitionParse`), so raw records never cross a step and only what the work returns travels on.

The work's state is part of the partition's recovery snapshot, beside the inner source's position: both belong to
the same epoch, so a resume continues the trials exactly where the records it re-reads left them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fairstream.engine.api import FixedPartitionedSource, StatefulSourcePartition
from fairstream.process import readiness
from fairstream.process.lifecycle import stop_requested


class PartitionWork(Protocol):
    def receive(self, raws: list[Any]) -> list[Any]: ...
    def finish(self) -> list[Any]: ...
    def snapshot(self) -> Any: ...
    def restore(self, state: Any) -> PartitionWork: ...


def partition_number(part: str) -> int:
    """The input partition a source part stands for: parts are named `<partition>-<topic or file>`."""
    return int(part.split("-", 1)[0])


class _WorkingPartition(StatefulSourcePartition[Any, tuple[Any, Any]]):
    def __init__(self, inner: StatefulSourcePartition, work: PartitionWork, part: str):
        self._inner = inner
        self._work = work
        self._ended = False
        self._part = part
        self._read = False
        readiness.built(part)

    def next_batch(self) -> list[Any]:
        if self._ended:
            raise StopIteration
        try:
            raws = self._inner.next_batch()
            if not self._read:
                self._read = True
                readiness.first_read(self._part)
        except StopIteration:
            self._ended = True
            if stop_requested():  # stopped, not ended: open trials wait in the snapshot for the resumed run
                raise
            return self._work.finish()
        return self._work.receive(raws)

    def next_awake(self) -> Any:
        return self._inner.next_awake()

    def snapshot(self) -> tuple[Any, Any]:
        return self._inner.snapshot(), self._work.snapshot()

    def close(self) -> None:
        self._inner.close()


class WorkingSource(FixedPartitionedSource[Any, tuple[Any, Any]]):
    """`source`'s partitions, each doing `new_work(partition number)` on its batches."""

    def __init__(self, source: FixedPartitionedSource, new_work: Callable[[int], PartitionWork]):
        self.source = source
        self._new_work = new_work

    def list_parts(self) -> list[str]:
        return self.source.list_parts()

    def build_part(self, step_id: str, for_part: str, resume_state: tuple[Any, Any] | None) -> _WorkingPartition:
        inner_state, work_state = resume_state if resume_state is not None else (None, None)
        work = self._new_work(partition_number(for_part))
        if work_state is not None:
            work = work.restore(work_state)
        return _WorkingPartition(self.source.build_part(step_id, for_part, inner_state), work, for_part)
