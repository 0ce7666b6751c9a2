"""Per-partition event-time clock: tracks the latest event time of one input partition, turns late events, and events
dated implausibly far ahead, into dead letters, and releases the events within the lateness in event-time order."""

from __future__ import annotations

import copy
import zlib
from bisect import bisect_left
from collections import defaultdict
from operator import attrgetter
from time import time_ns
from typing import NamedTuple

from fairstream.records.chain import RecordChain
from fairstream.records.events import DeadLetter, Event, Sealed
from fairstream.records.redact import DEFAULT, LetterRecord
from fairstream.records.timefmt import format_duration, format_instant

_key, _time = attrgetter("key"), attrgetter("time")

START_EVENTS = 100
"""A partition's first events held before any is admitted, so that one ancient event ahead of them is found
(`PartitionClock.max_gap`); fewer where the partition ends or goes quiet first."""
OUTLIERS = 10
"""Events dated before the stream's beginning are too old only where they are at most one in this many of the first
events: a few wrong dates, not a stream that starts sparse (a screening, and its outcome a year and a half later)."""


def wall_clock() -> int:
    """Milliseconds since the epoch now, by the machine's clock."""
    return time_ns() // 1_000_000


class LatenessBuffer:
    """Events that arrived within the lateness, held until the partition's watermark has passed them and then released
    in event-time order: events of equal time by their kind's place in `input.kinds`, then by their source (the topic
    of a partition that reads several, see `TopicMerge`), then as they arrived. So any order of arrival within the
    lateness folds as the time-ordered stream does (an outcome that arrives before its trial's opening event still
    joins it)."""

    def __init__(self, kind_rank: dict[str, int]):
        self.kind_rank = kind_rank
        self.held: list[tuple[int, int, int, int, Event]] = []
        self.arrived = 0

    def __len__(self) -> int:
        return len(self.held)

    def hold(self, events: list[Event], source: int = 0) -> None:
        """Hold `events` (in their arrival order), all from `source`."""
        rank, first = self.kind_rank.get, self.arrived
        entries = [(event.time, rank(event.kind, 0), source, first + index, event) for index, event in enumerate(events)]
        if not entries:
            return
        self.arrived += len(entries)
        held = self.held
        after = not held or held[-1] < entries[0]
        held.extend(entries)
        if not after or any(entries[index] > entries[index + 1] for index in range(len(entries) - 1)):
            held.sort()  # runs already in order merge in linear time

    def release(self, watermark: int) -> list[Event]:
        """The held events older than `watermark`, in order: no event still to come can go before them."""
        cut = bisect_left(self.held, (watermark,))
        released = [entry[4] for entry in self.held[:cut]]
        del self.held[:cut]
        return released

    def drain(self) -> list[Event]:
        released = [entry[4] for entry in self.held]
        self.held.clear()
        return released

    def copy(self) -> LatenessBuffer:
        copied = copy.copy(self)
        copied.held = list(self.held)
        return copied


class Refused(NamedTuple):
    """An event the clock does not admit: `late` (older than the watermark) or `future` (implausibly far ahead), why,
    and the partition's latest on-time event time when it arrived (None before any)."""

    event: Event
    reason: str
    detail: str
    high: int | None


class PartitionClock:
    """The latest event time seen in one input partition; an event older than it by more than the lateness is late.

    An event implausibly far ahead — more than `max_future` after the wall clock, or more than `max_ahead` after the
    partition's latest time — is a dead letter (`future`) and moves nothing: one bad clock cannot make every later
    event late. With a lateness, the admitted events wait in a `LatenessBuffer` and come out in event-time order.

    An event implausibly far behind the stream is one that lies before a silence longer than `max_gap` among the
    partition's first `START_EVENTS` events, before most of them: those are held (the clock does not move) until they
    are judged, and the ones before the stream's beginning are dead letters (`too_old`). So one event dated 1970 ahead of a stream of 2013
    cannot start the clock in 1970 and make every evaluation between the two; later on, an event that far behind is late.
    """

    def __init__(
        self,
        partition: int,
        lateness: int,
        *,
        max_future: int | None = None,
        max_ahead: int | None = None,
        max_gap: int | None = None,
        letter_record: LetterRecord = DEFAULT,
        kind_rank: dict[str, int] | None = None,
        ordered: bool = True,
        spec_sha256: str | None = None,
    ):
        self.partition = partition
        self.spec_sha256 = spec_sha256
        """Where set, the partition's dead letters form a hash chain naming this spec hash (see `records.chain`)."""
        self.chain: RecordChain | None = None
        self.letter_record = letter_record
        self.lateness = lateness
        self.max_future = max_future
        self.max_ahead = max_ahead
        self.max_gap = max_gap
        self.starting: list[Event] | None = [] if max_gap is not None else None
        """The partition's first events, held until judged (see `max_gap`); None once the partition has begun."""
        self.letters_held: list[DeadLetter] = []
        """Dead letters met while the first events are held: numbered with those the judgment makes, in offset order."""
        self.high: int | None = None
        self.dead_letters = 0
        self.buffer = LatenessBuffer(kind_rank or {}) if lateness > 0 and ordered else None
        """Events admitted but not yet due; None without a lateness, or where the caller orders events itself (`ordered`)."""

    def count(self, *groups: list[DeadLetter]) -> list[DeadLetter | Sealed]:
        """Number the partition's dead letters in offset order with a running count (and the chain's checkpoint seals);
        while its first events are held, its letters wait with them, so the count follows the offsets however the
        partition is batched."""
        if self.starting is not None:
            self.letters_held.extend(letter for group in groups for letter in group)
            return []
        held, self.letters_held = self.letters_held, []
        ordered = sorted((letter for group in (held, *groups) for letter in group), key=lambda letter: (letter.topic, letter.offset))
        numbered: list[DeadLetter | Sealed] = []
        for letter in ordered:
            self.dead_letters += 1
            numbered.extend(self._chained(letter._replace(count=self.dead_letters)))
        return numbered

    def _chained(self, letter: DeadLetter) -> list[DeadLetter | Sealed]:
        """The letter with its link in the partition's chain of dead letters where there is one, after the checkpoint
        seal due before it."""
        if self.spec_sha256 is None:
            return [letter]
        if self.chain is None:
            self.chain = RecordChain(f"dead_letters/{self.partition}", self.spec_sha256)
        checkpoint = self.chain.checkpoint()
        linked = letter._replace(chain=self.chain.link(letter.to_json())["chain"])
        return [linked] if checkpoint is None else [Sealed(checkpoint), linked]

    def seal(self) -> list[Sealed]:
        """The partition has ended: the closing seal of its dead letters' chain, where it wrote any."""
        return [] if self.chain is None else [Sealed(self.chain.seal(final=True))]

    def admit(self, events: list[Event]) -> tuple[list[Event], list[DeadLetter]]:
        """Split a batch (in partition order) into the events now due, in event-time order, and dead letters for late
        and future ones; with a lateness, admitted events are held until the watermark passes them (see `release_all`)."""
        too_old: list[DeadLetter] = []
        if self.starting is not None:
            self.starting.extend(events)
            if len(self.starting) < START_EVENTS and len(self.letters_held) < START_EVENTS:  # letters wait no longer than events
                return [], []
            events, too_old = self._begin()
        return self._pass(events, too_old)

    def _pass(self, events: list[Event], too_old: list[DeadLetter]) -> tuple[list[Event], list[DeadLetter]]:
        """`admit` once the partition has begun: the events now due, and the dead letters (`too_old` first)."""
        accepted, refused = self._classify(events)
        rejected = [*too_old, *(self.letter(out.event, out.reason, out.detail) for out in refused)]
        if self.buffer is None:
            return accepted, rejected
        self.buffer.hold(accepted)
        return self.buffer.release(self.high - self.lateness) if self.high is not None else [], rejected

    def begin_at_once(self) -> None:
        """Admit events as they come, without judging the first ones: for a caller that feeds records one at a time
        and wants each answered at once (`fairstream.FairnessMonitor`)."""
        self.starting = None

    def _begin(self) -> tuple[list[Event], list[DeadLetter]]:
        """The partition's first `START_EVENTS` events judged: split at every silence longer than `max_gap`, the part
        holding the most of them (the later of equals) is where the stream begins, and the events of the parts before
        it are `too_old`, where they are at most one in `OUTLIERS` of the events judged. Events past the wall clock's
        reach are left to `future`. The others go on, in arrival order."""
        held, self.starting = self.starting or [], None
        judged = held[:START_EVENTS]
        ceiling = None if self.max_future is None else wall_clock() + self.max_future
        times = sorted(event.time for event in judged if ceiling is None or event.time <= ceiling)
        reach = self.max_gap
        assert reach is not None
        starts = [0, *(index for index in range(1, len(times)) if times[index] - times[index - 1] > reach)]
        if len(starts) < 2:
            return held, []
        sizes = [end - start for start, end in zip(starts, [*starts[1:], len(times)])]
        first = max(zip(sizes, starts))[1]
        if first * OUTLIERS > len(times):
            return held, []  # too many to be a few wrong dates: a stream that starts sparse
        begins = times[first]
        detail = f"lies more than {format_duration(reach)} before the events that follow it: its partition's stream begins at {format_instant(begins)} (input.max_gap)"
        kept = [event for event in judged if event.time >= begins]
        too_old = [self.letter(event, "too_old", f"event time {format_instant(event.time)} {detail}") for event in judged if event.time < begins]
        return kept + held[START_EVENTS:], too_old

    def sort_out(self, events: list[Event]) -> tuple[list[Event], list[Refused]]:
        """Split a batch (in partition order) into the events on time and those late or too far ahead, each with where
        the partition's clock stood when it arrived, for a caller that answers every event (the shield)."""
        return self._classify(events)

    def release_all(self) -> tuple[list[Event], list[DeadLetter]]:
        """Every held event, in order, and the dead letters of the first events judged now: the partition has ended, or
        gone quiet, so no earlier event is to be waited for."""
        accepted, rejected = self._pass(*self._begin()) if self.starting is not None else ([], [])
        return accepted + ([] if self.buffer is None else self.buffer.drain()), rejected

    def admits_whole(self, times: list[int]) -> bool:
        """Whether a batch of these event times (in partition order, at least one) is admitted whole and due at once, as
        `admit` would admit it; if so the clock moves as `admit` would move it."""
        return self.buffer is None and self.starting is None and self._all_on_time(times, None if self.max_future is None else wall_clock() + self.max_future)

    def _all_on_time(self, times: list[int], ceiling: int | None) -> bool:
        """The usual case: nothing late, nothing ahead; the latest time then moves to the batch's last."""
        in_order = self.high is None or times[0] >= self.high - self.lateness
        if in_order and times == sorted(times) and (ceiling is None or times[-1] <= ceiling) and self._within_reach(times):
            self.high = times[-1] if self.high is None else max(self.high, times[-1])
            return True
        return False

    def _classify(self, events: list[Event]) -> tuple[list[Event], list[Refused]]:
        if not events:
            return events, []
        ceiling = None if self.max_future is None else wall_clock() + self.max_future
        if self._all_on_time(list(map(_time, events)), ceiling):
            return events, []
        return self._admit_one_by_one(events, ceiling)

    def _within_reach(self, times: list[int]) -> bool:
        """For times in order: whether none lies more than `max_ahead` after the latest time before it."""
        reach = self.max_ahead
        if reach is None:
            return True
        previous = times[0] if self.high is None else self.high
        for time in times:
            if time - previous > reach:
                return False
            previous = time
        return True

    def _admit_one_by_one(self, events: list[Event], ceiling: int | None) -> tuple[list[Event], list[Refused]]:
        """The general case: each event against the latest on-time event before it, and against how far ahead it may be."""
        accepted: list[Event] = []
        rejected: list[Refused] = []
        accept = accepted.append
        high, lateness, reach = self.high, self.lateness, self.max_ahead
        floor = None if high is None else high - lateness
        for event in events:
            time = event.time
            if floor is not None and time < floor:
                rejected.append(Refused(event, "late", f"event time {format_instant(time)} is older than the partition's watermark {format_instant(floor)}", high))
                continue
            if ceiling is not None and time > ceiling:
                wall = format_instant(ceiling - self.max_future)  # type: ignore[operator]
                rejected.append(Refused(event, "future", f"event time {format_instant(time)} is more than {format_duration(self.max_future)} after the wall clock ({wall})", high))  # type: ignore[arg-type]
                continue
            if reach is not None and high is not None and time > high + reach:
                detail = f"event time {format_instant(time)} is more than {format_duration(reach)} after the partition's latest event time {format_instant(high)}"
                rejected.append(Refused(event, "future", detail, high))
                continue
            accept(event)
            if high is None or time > high:
                high = time
                floor = high - lateness
        self.high = high
        return accepted, rejected

    def letter(self, event: Event, reason: str, detail: str) -> DeadLetter:
        """A dead letter for an event of this partition, its record as it arrived."""
        origin = event.origin
        return DeadLetter(
            reason,
            detail,
            self.letter_record(origin.payload if origin is not None else event.fields),
            self.partition,
            origin.offset if origin is not None else -1,
            topic=origin.topic if origin is not None else "",
        )

    def copy(self) -> PartitionClock:
        copied = copy.copy(self)
        if self.starting is not None:
            copied.starting = list(self.starting)
        copied.letters_held = list(self.letters_held)
        if self.chain is not None:
            copied.chain = copy.copy(self.chain)
        if self.buffer is not None:
            copied.buffer = self.buffer.copy()
        return copied

    def route(self, events: list[Event], buckets: int) -> dict[int, list[Event]]:
        """Group on-time events by trial bucket, keeping their order: a key's bucket is a stable hash (CRC-32) of it, the same in every process and run."""
        routed: defaultdict[int, list[Event]] = defaultdict(list)
        for event, code in zip(events, map(zlib.crc32, map(str.encode, map(_key, events)))):
            routed[code % buckets].append(event)
        return routed
