"""Decisions released in event-time order once the watermark has passed them, whatever partition they came from (pure)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from fairstream.records.events import DeadLetter, Event
from fairstream.records.redact import DEFAULT, LetterRecord
from fairstream.trials.clock import PartitionClock


@dataclass
class EventOrder:
    """Buffers events until every input partition has moved past them, then hands them out by (time, key, arrival)."""

    partitions: int
    lateness: int
    max_future: int | None = None
    max_ahead: int | None = None
    letter_record: LetterRecord = DEFAULT
    clocks: dict[int, PartitionClock] = field(default_factory=dict)
    idle: set[int] = field(default_factory=set)
    buffer: list[tuple[int, str, int, Event]] = field(default_factory=list)
    seq: int = 0

    def receive(self, partition: int, events: list[Event], dead: list[DeadLetter], idle: bool) -> tuple[list[Event], list[DeadLetter]]:
        """Take a partition's batch; return the events now safe to act on, in order, and the partition's dead letters."""
        clock = self.clocks.get(partition)
        if clock is None:
            clock = self.clocks[partition] = PartitionClock(
                partition, self.lateness, max_future=self.max_future, max_ahead=self.max_ahead, letter_record=self.letter_record, ordered=False
            )
        accepted, late = clock.admit(events)
        for event in accepted:
            self.seq += 1
            heapq.heappush(self.buffer, (event.time, event.key, self.seq, event))
        if idle:
            self.idle.add(partition)
        elif events:
            self.idle.discard(partition)
        return self._release(), clock.count(dead, late)

    def finish(self) -> list[Event]:
        """The input ended: everything buffered, in order."""
        return self._release(final=True)

    def _release(self, final: bool = False) -> list[Event]:
        if not final:
            known = {p for p, clock in self.clocks.items() if clock.high is not None} | self.idle
            active = [clock.high for p, clock in self.clocks.items() if clock.high is not None and p not in self.idle]
            if len(known) < self.partitions or not active:
                return []
            watermark = min(active) - self.lateness
        released = []
        while self.buffer and (final or self.buffer[0][0] < watermark):
            released.append(heapq.heappop(self.buffer)[3])
        return released
