"""One input partition's share of a job where it is read: parse its records, check that their keys belong to it, run its
event-time clock and fold its events into its own trial buckets, one per monitor (pure).

When every event of a dependence key is in one partition (a topic keyed by it), a partition's trials depend on its
events alone, so they are kept on the worker that reads it; what leaves is dead letters and each monitor's per-tick
`Report`, which the merge combines exactly as it combines the reports of buckets. The watermark of a tick is then the
minimum over partitions of their own, the same tick set as one clock over all partitions would give.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from fairstream.process.telemetry import SILENT, Telemetry
from fairstream.reading.parse import ParsedBatch, RecordParser
from fairstream.reading.typed import EventColumns, TypedParser
from fairstream.records.events import ENDED, IDLE, DeadLetter, Event, LineBlock, RawRecord, Sealed
from fairstream.trials.bucket import Bucket, Report
from fairstream.trials.clock import PartitionClock
from fairstream.trials.merge import TopicMerge

log = logging.getLogger("fairstream.trials")

BatchParse = Callable[[list[RawRecord]], ParsedBatch]
"""A parser's `parse_batch`."""

Output = DeadLetter | Sealed | tuple[int, Report]
"""What a partition sends on: a dead letter (or a seal of their chain), or (monitor index, report)."""


def split_batch(parse_batch: BatchParse, raws: list[RawRecord], idle_markers: tuple[int, ...]) -> tuple[list[Event], list[DeadLetter], bool]:
    """A batch of a partition that reads one topic (or file): its events, its dead letters, and whether it held one of
    the markers the caller counts as idle and no event."""
    events, dead, markers = parse_batch(raws)
    return events, dead, not events and any(marker.offset in idle_markers for marker in markers)


def split_topics(parse_batch: BatchParse, raws: list[RawRecord], merge: TopicMerge) -> tuple[list[Event], list[DeadLetter]]:
    """A batch of a partition that reads several topics, passed through their event-time merge: the events now due in
    order, and the dead letters."""
    events, dead, markers = parse_batch(raws)
    quiet = [marker.topic for marker in markers if marker.offset == IDLE]
    ended = [marker.topic for marker in markers if marker.offset == ENDED]
    return merge.receive(events, quiet, ended), dead


class PartitionTrials:
    """The clock and the trial buckets of one input partition whose keys are in no other partition: a bucket per group of
    monitors whose trials agree (`groups`, monitor indices), each reporting to every monitor of its group."""

    def __init__(
        self,
        parser: RecordParser | TypedParser,
        clock: PartitionClock,
        buckets: list[Bucket],
        groups: list[list[int]],
        monitors: list[str],
        placement: Callable[[list[str]], list[int]] | None = None,
        merge: TopicMerge | None = None,
        telemetry: Telemetry = SILENT,
    ):
        self._parse_batch = parser.parse_batch
        self._parse_columns = parser.parse_columns if isinstance(parser, TypedParser) else None
        self.clock = clock
        self.buckets = buckets
        self._groups = groups
        self._monitors = monitors
        self._placement = placement
        self.merge = merge
        """The event-time merge of the partition's topics where it reads several, else None."""
        self._idle = False
        self._telemetry = telemetry

    @property
    def partition(self) -> int:
        return self.clock.partition

    def receive(self, raws: Sequence[RawRecord]) -> list[Output]:
        """A source batch in partition order: its dead letters, and the reports of every bucket that got further."""
        if self.merge is not None:
            return self._receive_merged(raws)
        if self._parse_columns is not None and type(raws) is LineBlock:  # a file's or a topic batch's lines: no markers
            parsed, dead, _markers = self._parse_columns(raws)
            self._idle = False
            if type(parsed) is EventColumns:
                return self._admit_columns(parsed)
            return self._admit(parsed, dead)  # type: ignore[arg-type]
        events, dead, idle = split_batch(self._parse_batch, raws, (IDLE,))  # at ENDED the partition's final reports follow
        if idle:  # quiet: nothing earlier is to be waited for
            return [*self._fold_held(), *self._idle_reports()]
        self._idle = False
        return self._admit(events, dead)

    def _receive_merged(self, raws: list[RawRecord]) -> list[Output]:
        """A batch of several topics: what their merge releases is admitted; every topic quiet (not all ended) is idle."""
        merge = self.merge
        events, dead = split_topics(self._parse_batch, raws, merge)  # type: ignore[arg-type]
        out = self._admit(events, dead) if events or dead else []
        if merge.idle:  # type: ignore[union-attr]
            return [*out, *self._fold_held(), *self._idle_reports()]
        if events:
            self._idle = False
        return out

    def _admit(self, events: list[Event], dead: list[DeadLetter]) -> list[Output]:
        """Check the events' partition, run them through the clock and fold those now due."""
        if self._placement is not None and events:
            events, strays = self._strays(events)
            dead.extend(strays)
        clock = self.clock
        accepted, late = clock.admit(events)
        self._telemetry.read(clock.partition, len(events) + len(dead), clock.high)
        return [*clock.count(dead, late), *self._fold(accepted)]

    def _admit_columns(self, columns: EventColumns) -> list[Output]:
        """A block of events: folded as columns where every key belongs to this partition, the clock admits it whole and
        every bucket folds columns; else event by event."""
        clock = self.clock
        strays = self._placement is not None and self._placement(columns.keys).count(clock.partition) != len(columns)
        if strays or not all(bucket.folds_columns for bucket in self.buckets) or not clock.admits_whole(columns.times):
            return self._admit(columns.events(), [])
        self._telemetry.read(clock.partition, len(columns), clock.high)
        return self._fold(columns)

    def _fold_held(self) -> list[Output]:
        """Fold the events the clock still holds (within the lateness, or the partition's first events), if any."""
        held, letters = self.clock.release_all()
        return [*self.clock.count(letters), *(self._fold(held) if held else [])]

    def _fold(self, accepted: list[Event] | EventColumns) -> list[Output]:
        """Fold due events into every bucket; the reports of those that got further."""
        clock = self.clock
        out: list[Output] = []
        for bucket, group in zip(self.buckets, self._groups):
            warned = bucket.ever_evicted
            reports = bucket.receive(clock.partition, accepted, clock.high)
            for index in group:
                self._telemetry.open_trials(self._monitors[index], clock.partition, len(bucket.trials))
            if bucket.ever_evicted and not warned:
                log.warning(
                    "input partition %d of monitor %s reached its %s open trials (trial.max_open / partitions): trials opened beyond it are not kept (counted as evicted in every estimate): the estimates count only the trials that opened while there was room",
                    clock.partition, " and ".join(self._monitors[index] for index in group), f"{bucket.max_open:,}",
                )  # fmt: skip
            out.extend(zip(group, reports))
        return out

    def _strays(self, events: list[Event]) -> tuple[list[Event], list[DeadLetter]]:
        """Split off the events whose key the partitioner puts on another partition."""
        partition = self.clock.partition
        owners = self._placement([event.key for event in events])  # type: ignore[misc]
        if all(owner == partition for owner in owners):
            return events, []
        kept: list[Event] = []
        strays: list[DeadLetter] = []
        for event, owner in zip(events, owners):
            if owner == partition:
                kept.append(event)
            else:
                detail = f"key {event.key!r} belongs to partition {owner} (input.partitioner); its trial is kept there"
                strays.append(self.clock.letter(event, "wrong_partition", detail))
        return kept, strays

    def _idle_reports(self) -> list[Output]:
        """The partition has been quiet a while (or has ended): tell each merge not to wait for it, once."""
        if self._idle:
            return []
        self._idle = True
        return [item for bucket, group in zip(self.buckets, self._groups) for item in zip(group, bucket.idle_reports())]

    def finish(self) -> list[Output]:
        """The partition has ended: fold the events still held, close every open trial and report every tick it reached."""
        merged = self._admit(self.merge.drain(), []) if self.merge is not None and len(self.merge) else []
        reports = (item for bucket, group in zip(self.buckets, self._groups) for item in zip(group, bucket.finish()))
        return [*merged, *self._fold_held(), *reports, *self.clock.seal()]

    def snapshot(self) -> tuple[PartitionClock, list[Bucket], bool, TopicMerge | None]:
        return self.clock.copy(), [bucket.snapshot() for bucket in self.buckets], self._idle, self.merge.copy() if self.merge is not None else None

    def restore(self, state: tuple[PartitionClock, list[Bucket], bool, TopicMerge | None]) -> PartitionTrials:
        """Continue from a snapshot (the parser and placement are this run's)."""
        self.clock, self.buckets, self._idle, self.merge = state
        return self


class PartitionParse:
    """Parsing alone, for flows that order events across partitions themselves (the shield) and for the passthrough
    benchmark: each batch becomes `("p<partition>", (partition, events, dead letters, idle))`."""

    def __init__(self, parser: RecordParser | TypedParser, partition: int, merge: TopicMerge | None = None):
        self._parse_batch = parser.parse_batch
        self.partition = partition
        self.merge = merge
        """The event-time merge of the partition's topics where it reads several, else None."""

    def receive(self, raws: Sequence[RawRecord]) -> list[tuple[str, tuple[int, list[Event], list[DeadLetter], bool]]]:
        if not raws:
            return []
        key = f"p{self.partition}"
        if type(raws) is LineBlock:  # a block of lines, its records taken one by one here
            raws = list(raws)
        if self.merge is None:
            events, dead, idle = split_batch(self._parse_batch, raws, (IDLE, ENDED))
            return [(key, (self.partition, events, dead, idle))]
        events, dead = split_topics(self._parse_batch, raws, self.merge)
        out = [(key, (self.partition, events, dead, False))] if events or dead else []
        if self.merge.quiet:
            out.append((key, (self.partition, [], [], True)))
        return out

    def finish(self) -> list[Any]:
        if self.merge is None or not len(self.merge):
            return []
        return [(f"p{self.partition}", (self.partition, self.merge.drain(), [], False))]

    def snapshot(self) -> TopicMerge | None:
        return self.merge.copy() if self.merge is not None else None

    def restore(self, state: TopicMerge | None) -> PartitionParse:
        self.merge = state
        return self

