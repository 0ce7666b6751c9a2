"""The two stages of a job run by a Kafka consumer group (`--group`), as plain objects whose state is a snapshot.

Stage one, `GroupPartition`: one input partition's trials where the partition is read, each batch becoming a `Step`
(the partition's outputs, numbered). Stage two, `GroupMerge`: the steps of every partition, merged per monitor and
judged, as `build_flow`'s merges and job alarm do. A new owner of a partition continues from its `Checkpoint` and
re-reads the steps written after it, cutting its input exactly where they were cut, so no step is written twice with
another content and the merge drops a step it has already merged (same partition, same number).
"""

from __future__ import annotations

import pickle
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fairstream.compiler.plan import Plan
from fairstream.dataflow.flow import MergeStep, count_groups, job_members, merged_monitor, new_partition_trials
from fairstream.dataflow.job import new_job_step
from fairstream.process.telemetry import SILENT, Telemetry
from fairstream.records.envelope import EVIDENCE
from fairstream.records.events import ENDED, IDLE, DeadLetter, LineBlock, RawRecord, Sealed
from fairstream.trials.partition import Output, PartitionTrials


class Encoded:
    """A value of the group's own topics: pickled whole (see `decode`)."""

    def encode(self) -> bytes:
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)


@dataclass(frozen=True)
class Step(Encoded):
    """What one batch of an input partition gave: its number in the partition, the last input offset it read (None for
    a marker), the marker it was (`IDLE`, `ENDED`, or None for messages) and its outputs."""

    partition: int
    seq: int
    last_offset: int | None
    marker: int | None
    outputs: list[Output]


@dataclass(frozen=True)
class Checkpoint(Encoded):
    """An input partition's trials after step `seq`: the input offset to read next (None: from the beginning), the offset
    of the steps topic after that step's record (where later steps of the partition are to be found), whether the
    partition has ended, and the trials' snapshot."""

    partition: int
    seq: int
    next_offset: int | None
    steps_offset: int
    ended: bool
    trials: Any


def decode(value: bytes) -> Any:
    """A `Step`, `Checkpoint` or `MergeCheckpoint` from the group's own topics (which only the job may write)."""
    return pickle.loads(value)  # noqa: S301 - the group's internal topics, written by its processes alone


class GroupPartition:
    """One input partition's trials in a group run: live batches become numbered steps; after a checkpoint the steps
    already written are `replay`ed, the input cut where they were cut and their outputs not written again."""

    def __init__(self, trials: PartitionTrials, partition: int, checkpoint: Checkpoint | None = None, replay: Iterable[Step] = ()):
        self.partition = partition
        self.trials = trials if checkpoint is None else trials.restore(checkpoint.trials)
        self.seq = 0 if checkpoint is None else checkpoint.seq
        self.next_offset = None if checkpoint is None else checkpoint.next_offset
        self.ended = checkpoint is not None and checkpoint.ended
        self.pending: deque[Step] = deque(step for step in replay if step.seq > self.seq)
        self._held: list[tuple[int, Any]] = []

    @property
    def replaying(self) -> bool:
        return bool(self.pending)

    def resume_offset(self) -> int | None:
        """Where reading goes on (None: the partition's start); messages read beyond it and held are read again."""
        self._held = []
        return self.next_offset

    def messages(self, offsets: list[int], values: list[Any]) -> list[Step]:
        """The steps a batch of the partition's messages makes: none while it only re-reads steps already written."""
        if self.ended:
            return []
        if self.pending:
            self._held.extend(zip(offsets, values))
            return self._replay()
        return self._live(offsets, values)

    def marker(self, marker: int) -> list[Step]:
        """The partition went quiet (`IDLE`) or was read to its end (`ENDED`): one step, unless it is being re-read."""
        steps = self._replay() if self.pending else []
        if self.ended or self.pending:
            return steps
        raw = [RawRecord(self.partition, marker, None, "")]
        if marker == ENDED:
            self.ended = True
            return [*steps, self._step(None, ENDED, [*self.trials.receive(raw), *self.trials.finish()])]
        return [*steps, self._step(None, IDLE, self.trials.receive(raw))]

    def _live(self, offsets: list[int], values: list[Any]) -> list[Step]:
        if not offsets:
            return []
        self.next_offset = offsets[-1] + 1
        return [self._step(offsets[-1], None, self.trials.receive(_raws(self.partition, offsets, values)))]

    def checkpoint(self, steps_offset: int) -> Checkpoint:
        return Checkpoint(self.partition, self.seq, self.next_offset, steps_offset, self.ended, self.trials.snapshot())

    def _step(self, last_offset: int | None, marker: int | None, outputs: list[Output]) -> Step:
        self.seq += 1
        return Step(self.partition, self.seq, last_offset, marker, outputs)

    def _replay(self) -> list[Step]:
        """Re-run the steps written before, each over exactly the messages and the marker it was made of; the messages
        read beyond the last of them make a live step."""
        while self.pending:
            step = self.pending[0]
            if step.marker is not None:
                raw = [RawRecord(self.partition, step.marker, None, "")]
                self.trials.receive(raw)
                if step.marker == ENDED:
                    self.trials.finish()
                    self.ended = True
            else:
                cut = next((index for index, (offset, _value) in enumerate(self._held) if offset > step.last_offset), len(self._held))
                if cut == len(self._held) and (not self._held or self._held[-1][0] < step.last_offset):
                    return []  # the step's last message is not read yet (a message read past it completes it)
                taken, self._held = self._held[:cut], self._held[cut:]
                self.trials.receive(_raws(self.partition, [offset for offset, _ in taken], [value for _, value in taken]))
                self.next_offset = step.last_offset + 1
            self.seq = step.seq
            self.pending.popleft()
        held, self._held = self._held, []
        if self.ended:
            return []
        return self._live([offset for offset, _ in held], [value for _, value in held])


def _raws(partition: int, offsets: list[int], values: list[Any]) -> LineBlock | list[RawRecord]:
    block = LineBlock.of_records(partition, offsets, values)
    return block if block is not None else [RawRecord(partition, offset, value, "") for offset, value in zip(offsets, values)]


@dataclass(frozen=True)
class MergeCheckpoint(Encoded):
    """The merge stage after the steps topic's offset `steps_offset`: the merges, the job's alarm, the last step merged
    of each partition and the partitions that have ended."""

    steps_offset: int
    state: Any


class GroupMerge:
    """The job's merges over the steps of its `partitions` input partitions: each monitor's counts merged once per group
    of monitors that count alike, the job's alarm where several monitors join it, dead letters passed on as records."""

    def __init__(self, plans: Sequence[Plan], partitions: int, checkpoint: MergeCheckpoint | None = None, telemetry: Telemetry = SILENT):
        plans = job_members(plans)
        self.partitions = partitions
        self._groups = count_groups(plans)
        self._telemetry = telemetry
        if checkpoint is None:
            self._merges = [MergeStep(merged_monitor([plans[index] for index in group], partitions)) for group in self._groups]
            self._job = new_job_step(plans)
            self.merged: dict[int, int] = {}
            self.ended_partitions: set[int] = set()
        else:
            self._merges, self._job, self.merged, self.ended_partitions = checkpoint.state
        self._route = {group[0]: position for position, group in enumerate(self._groups)}
        self.duplicates = 0
        """Steps received again (a partition re-read by its new owner, a message sent twice) and dropped."""

    @property
    def ended(self) -> bool:
        return len(self.ended_partitions) == self.partitions

    def receive(self, step: Step) -> list[dict[str, Any]]:
        """The records one step makes; none for a step merged before."""
        if step.seq <= self.merged.get(step.partition, 0):
            self.duplicates += 1
            return []
        self.merged[step.partition] = step.seq
        if step.marker == ENDED:
            self.ended_partitions.add(step.partition)
        records: list[dict[str, Any]] = []
        for output in step.outputs:
            if type(output) is DeadLetter or type(output) is Sealed:
                records.append(output.to_json())
                continue
            index, report = output
            position = self._route.get(index)
            if position is not None:
                records.extend(self._judged(self._merges[position].on_item(report)[0]))
        for record in records:
            self._telemetry.observe(record)
        return records

    def checkpoint(self, steps_offset: int) -> bytes:
        """The encoded `MergeCheckpoint` of the merges now."""
        return MergeCheckpoint(steps_offset, (self._merges, self._job, self.merged, self.ended_partitions)).encode()

    def _judged(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A merge's records, its evidence taken by the job's alarm."""
        out: list[dict[str, Any]] = []
        for record in records:
            if record["type"] != EVIDENCE:
                out.append(record)
            elif self._job is not None:
                out.extend(self._job.on_item(record)[0])
        return out


def partition_work(plans: Sequence[Plan], partition: int, partitions: int, telemetry: Telemetry = SILENT) -> PartitionTrials:
    """A new input partition's trials for a group run (the job's plans, as its merge sees them)."""
    return new_partition_trials(job_members(plans), partition, partitions, strings=False, telemetry=telemetry)
