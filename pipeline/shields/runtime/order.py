"""Decisions released in event-time order once the watermark has passed them, whatever partition they came from, or
once they have waited `answer_within` by the wall clock (pure, given the clock's readings).

On a decision path every decision gets an answer: one that arrives later than the lateness allows, or dated
implausibly far ahead, is not a dead letter here but is ordered as if it had arrived at its partition's latest event
time (after the events of that time), and released marked `late` or `future`; the shield decides it by its state then.
Where the partition's clock stood is a fact of the partition's own order, so the answer is the same whatever the
batches and other partitions.

A decision that has waited `answer_within` is released with every event held before it in the order: the order is
then settled up to its time (the floor). An event that arrives later dated at or before the floor is `overtaken`: a
decision or label is ordered at the floor (after what was released) and answered marked so; any other event is a dead
letter. So the clock changes an answer only where an event arrives behind one already answered; a replay whose
events all arrive before their deadlines gives the records of the pure event-time order.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from fairstream.records.events import DeadLetter, Event
from fairstream.records.redact import DEFAULT, LetterRecord
from fairstream.records.timefmt import MIN_TIME, format_instant
from fairstream.trials.clock import PartitionClock, wall_clock

Released = tuple[Event, str]
"""An event to act on, and how it arrived: "" on time, "late", "future" or "overtaken" (decisions and labels only)."""

OVERTAKEN = "overtaken"
"""How an event arrived that is dated at or before a decision the clock already released."""


@dataclass
class EventOrder:
    """Buffers events until every input partition has moved past them, then hands them out by (time, key, arrival),
    an event out of order after those on time at the time it is ordered at.

    Events of the kinds `answered` (the decisions, and the labels equal opportunity counts by) are released even when
    late, too far ahead or overtaken; other events that are are dead letters. `answer_within` is in milliseconds of the
    wall clock (None: wait for the watermark, however long).
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
    answer_within: int | None = None
    deadlines: list[tuple[int, int]] = field(default_factory=list)
    """(wall-clock deadline in ms, place) of each held decision or label, earliest first; released ones drop out lazily."""
    waiting: dict[int, int] = field(default_factory=dict)
    """The event time of each held decision or label with a deadline, by its place."""
    floor: int | None = None
    """The latest event time the clock released up to: the order is settled there."""
    overtaken: int = 0

    def receive(self, partition: int, events: list[Event], dead: list[DeadLetter], idle: bool) -> tuple[list[Released], list[DeadLetter]]:
        """Take a partition's batch; return the events now safe to act on, in order, and the partition's dead letters."""
        clock = self.clocks.get(partition)
        if clock is None:
            clock = self.clocks[partition] = PartitionClock(
                partition, self.lateness, max_future=self.max_future, max_ahead=self.max_ahead, letter_record=self.letter_record, ordered=False
            )
        accepted, refused = clock.sort_out(events)
        late = []
        for event in accepted:
            if self.floor is None or event.time > self.floor:
                self._hold(event.time, event, "")
            elif event.kind in self.answered:
                self._hold(self.floor, event, OVERTAKEN)
            else:
                late.append(clock.letter(event, OVERTAKEN, f"event time {format_instant(event.time)} is at or before {format_instant(self.floor)}, where a decision was already answered (shield.answer_within)"))
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

    def next_deadline(self) -> int | None:
        """When the earliest held decision or label is due by the wall clock (ms), or None."""
        while self.deadlines and self.deadlines[0][1] not in self.waiting:
            heapq.heappop(self.deadlines)
        return self.deadlines[0][0] if self.deadlines else None

    def release_due(self, now: int) -> list[Released]:
        """The events released because a decision or label has waited its time at `now` (ms of the wall clock): every
        held event up to the latest such one's time, in order."""
        due = None
        while self.deadlines and self.deadlines[0][0] <= now:
            _deadline, place = heapq.heappop(self.deadlines)
            time = self.waiting.get(place)
            if time is not None and (due is None or time > due):
                due = time
        if due is None:
            return []
        self.floor = due if self.floor is None else max(self.floor, due)
        return self._release()

    def finish(self) -> list[Released]:
        """The input ended: everything buffered, in order."""
        return self._release(final=True)

    def _hold(self, time: int, event: Event, arrival: str) -> None:
        """Buffer an event by (time, on time before out of order, key, arrival)."""
        self.seq += 1
        heapq.heappush(self.buffer, (time, bool(arrival), event.key, self.seq, event, arrival))
        self.overtaken += arrival == OVERTAKEN
        if self.answer_within is not None and event.kind in self.answered:
            heapq.heappush(self.deadlines, (wall_clock() + self.answer_within, self.seq))
            self.waiting[self.seq] = time

    def _watermark(self) -> int | None:
        """The time before which no event still to come can be ordered, where every partition has been heard from."""
        known = {p for p, clock in self.clocks.items() if clock.high is not None} | self.idle
        active = [clock.high for p, clock in self.clocks.items() if clock.high is not None and p not in self.idle]
        if len(known) < self.partitions or not active:
            return None
        return min(active) - self.lateness

    def _release(self, final: bool = False) -> list[Released]:
        watermark = None if final else self._watermark()
        settled = MIN_TIME - 1 if self.floor is None else self.floor
        released = []
        while self.buffer and (final or self.buffer[0][0] <= settled or (watermark is not None and self.buffer[0][0] < watermark)):
            *_order, place, event, arrival = heapq.heappop(self.buffer)
            self.waiting.pop(place, None)
            released.append((event, arrival))
        return released
