"""Decisions released in event-time order once the watermark has passed them, whatever partition they came from (pure).

On a decision path every decision gets an answer: one that arrives later than the lateness allows, or dated
implausibly far ahead, is not a dead letter here but is ordered as if it had arrived at its partition's latest event
time (after the events of that time), and released marked `late` or `future`; the shield decides it by its state then. Where the partition's clock
stood is a fact of the partition's own order, so the answer is the same whatever the batches and other partitions.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from fairstream.records.events import DeadLetter, Event
from fairstream.records.redact import DEFAULT, LetterRecord
from fairstream.records.timefmt import MIN_TIME
from fairstream.trials.clock import PartitionClock

Released = tuple[Event, str]
"""An event to act on, and how it arrived: "" on time, "late" or "future" (decisions only)."""


@dataclass
class EventOrder:
    """Buffers events until every input partition has moved past them, then hands them out by (time, key, arrival),
    an event out of order after those on time at the time it is ordered at.

    Events of the kinds `answered` (the decisions, and the labels equal opportunity counts by) are released even when
    late or too far ahead; other events that are are dead letters.
    """

    partitions: int
    lateness: int
    max_future: int | None = None
    max_ahead: int | None = None
    letter_record: LetterRecord = DEFAULT
    answered: frozenset[str] = frozenset()
    clocks: dict[int, PartitionClock] = field(default_factory=dict)
    idle: set[int] = field(default_factory=set)
    buffer: list[tuple[int, bool, str, int, Event, str]] = field(default_factory=list)
    seq: int = 0

    def receive(self, partition: int, events: list[Event], dead: list[DeadLetter], idle: bool) -> tuple[list[Released], list[DeadLetter]]:
        """Take a partition's batch; return the events now safe to act on, in order, and the partition's dead letters."""
        clock = self.clocks.get(partition)
        if clock is None:
            clock = self.clocks[partition] = PartitionClock(
                partition, self.lateness, max_future=self.max_future, max_ahead=self.max_ahead, letter_record=self.letter_record, ordered=False
            )
        accepted, refused = clock.sort_out(events)
        for event in accepted:
            self._hold(event.time, event, "")
        late = []
        for out in refused:
            if out.event.kind in self.answered:  # answered as of where its partition stood when it arrived
                self._hold(out.high if out.high is not None else MIN_TIME, out.event, out.reason)
            else:
                late.append(clock.letter(out.event, out.reason, out.detail))
        if idle:
            self.idle.add(partition)
        elif events:
            self.idle.discard(partition)
        return self._release(), clock.count(dead, late)

    def finish(self) -> list[Released]:
        """The input ended: everything buffered, in order."""
        return self._release(final=True)

    def _hold(self, time: int, event: Event, arrival: str) -> None:
        """Buffer an event by (time, on time before out of order, key, arrival)."""
        self.seq += 1
        heapq.heappush(self.buffer, (time, bool(arrival), event.key, self.seq, event, arrival))

    def _release(self, final: bool = False) -> list[Released]:
        if not final:
            known = {p for p, clock in self.clocks.items() if clock.high is not None} | self.idle
            active = [clock.high for p, clock in self.clocks.items() if clock.high is not None and p not in self.idle]
            if len(known) < self.partitions or not active:
                return []
            watermark = min(active) - self.lateness
        released = []
        while self.buffer and (final or self.buffer[0][0] < watermark):
            *_order, event, arrival = heapq.heappop(self.buffer)
            released.append((event, arrival))
        return released
