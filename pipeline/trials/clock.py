"""Per-partition event-time clock: tracks the latest event time of one input partition and turns late events into dead letters."""

from __future__ import annotations

import zlib
from collections import defaultdict
from operator import attrgetter

import orjson

from pipeline.events import DeadLetter, Event
from pipeline.parse import record_text
from pipeline.timefmt import format_instant

_key, _time = attrgetter("key"), attrgetter("time")


class PartitionClock:
    """The latest event time seen in one input partition; an event older than it by more than the lateness is late."""

    def __init__(self, partition: int, lateness: int):
        self.partition = partition
        self.lateness = lateness
        self.high: int | None = None
        self.dead_letters = 0

    def count(self, *groups: list[DeadLetter]) -> list[DeadLetter]:
        """Number the partition's dead letters in offset order with a running count."""
        ordered = sorted((letter for group in groups for letter in group), key=lambda letter: letter.offset)
        numbered = []
        for letter in ordered:
            self.dead_letters += 1
            numbered.append(letter._replace(count=self.dead_letters))
        return numbered

    def admit(self, events: list[Event]) -> tuple[list[Event], list[DeadLetter]]:
        """Split a batch (in partition order) into on-time events and dead letters for late ones."""
        if not events:
            return events, []
        times = list(map(_time, events))
        in_order = self.high is None or times[0] >= self.high - self.lateness
        if in_order and times == sorted(times):  # the usual case: no event is older than one before it
            self.high = times[-1] if self.high is None else max(self.high, times[-1])
            return events, []
        return self._admit_one_by_one(events)

    def _admit_one_by_one(self, events: list[Event]) -> tuple[list[Event], list[DeadLetter]]:
        """The general case: each event against the latest on-time event before it."""
        accepted: list[Event] = []
        late: list[DeadLetter] = []
        accept = accepted.append
        high, lateness = self.high, self.lateness
        floor = None if high is None else high - lateness
        for event in events:
            time = event.time
            if floor is not None and time < floor:
                late.append(self._late(event, floor))
                continue
            accept(event)
            if high is None or time > high:
                high = time
                floor = high - lateness
        self.high = high
        return accepted, late

    def _late(self, event: Event, watermark: int) -> DeadLetter:
        origin = event.origin
        return DeadLetter(
            "late",
            f"event time {format_instant(event.time)} is older than the partition's watermark {format_instant(watermark)}",
            record_text(origin.payload) if origin is not None else orjson.dumps(event.fields, default=str).decode(),
            self.partition,
            origin.offset if origin is not None else -1,
        )

    def route(self, events: list[Event], buckets: int) -> dict[int, list[Event]]:
        """Group on-time events by trial bucket, keeping their order: a key's bucket is a stable hash (CRC-32) of it, the same in every process and run."""
        routed: defaultdict[int, list[Event]] = defaultdict(list)
        for event, code in zip(events, map(zlib.crc32, map(str.encode, map(_key, events)))):
            routed[code % buckets].append(event)
        return routed
