"""A bucket of trials: opens trials on their first event, closes them by event time or on a closing event, and reports closed trials per tick (pure)."""

from __future__ import annotations

import copy
import operator
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

from fairstream.reading.typed import EventColumns
from fairstream.records.events import Event
from fairstream.records.timefmt import ceil_to
from fairstream.trials.clock import LatenessBuffer
from fairstream.trials.closing import CloseSchedule
from fairstream.trials.folds import fold, fold_columns
from fairstream.trials.layout import State, TrialLayout
from fairstream.trials.outcomes import Outcomes, SlotOutcomes, TickDelta, TrialOutcome
from fairstream.trials.panes import Panes, WindowPlan

try:
    from fairstream.trials.table import PackedTrials
except ImportError:  # installed without a C compiler: trials stay in dicts
    PackedTrials = None

_CELLS, _TOTALS = operator.itemgetter(0), operator.itemgetter(1)
"""The cells and the aggregate contributions of what a closed trial counts in (`Counted`)."""

FINISHED = 2**62
"""`through` of a bucket whose input has ended (later than any event time): every trial with a close time is closed and reported; trials that wait for a closing event are counted as unfinished."""


@dataclass(frozen=True)
class Recipient:
    """A monitor that counts a bucket's closed trials: its mapping of trials to cells, and whether it takes them one by one."""

    outcomes: Outcomes
    keep_trials: bool = False
    opening_order: bool = False
    """Whether the monitor needs to know when every trial opened before an instant has closed (anytime tests)."""
    windows: tuple[WindowPlan, ...] = ()
    """The spec's windows over raw events, summed into panes where the events are read (see `fairstream.trials.panes`)."""
    counts_open: bool = False
    """Whether the monitor counts its open trials (a trigger reads `open_trials`): reports say how many trials opened in
    each tick."""


@dataclass
class Report:
    """A bucket's progress: every tick up to `through` is final; `deltas` holds the non-empty ones."""

    bucket: int
    through: int
    deltas: dict[int, TickDelta]
    unmatched: int = 0
    unfinished: int = 0
    evicted: int = 0
    """Trials dropped unreported because the bucket held more open trials than it may (see `Bucket.max_open`)."""
    end: int | None = None
    """With `through` = FINISHED: the last tick the watermark of the ended input reaches, every partition's latest time
    counting (an ended partition no longer holds it back), so the merge evaluates every tick up to there."""
    idle: bool = False
    """The reporter's input partition is quiet for now: the merge goes on without waiting for it (see `Bucket.idle_reports`)."""
    oldest_open: int = FINISHED
    """The earliest opening time of the reporter's trials not yet reported (open, or closed in a tick not yet final), for
    recipients that ask for it (`Recipient.opening_order`); FINISHED when there is none."""
    first_opening: int | None = None
    """The event time of the first event of an opening kind (a decision) the reporter has received, None before any."""


class Trials(dict):
    """Open trials by dependence key, for layouts whose states are tuples. A dict subclass on purpose: CPython's full
    collection untracks a plain dict whose values are all untracked (immutable trial states), and the next insert of a
    new tuple re-tracks it into the youngest generation, so every young collection re-scans the whole table; a subclass
    stays tracked in the oldest one. States that are ints (exact slots) never re-track a plain dict, which is then left
    out of collections altogether."""


class ClosedTrials:
    """Trials closed in one report, grouped by the tick they close in: per tick, their close times, keys and states.

    By profile (`slots_of_all` given: see `Bucket.by_profile`) a tick holds instead how many of its trials closed with
    each slot tuple (`counted`), in the order the tuples first closed.
    """

    def __init__(self, tick: int, slots_of_all: Callable[[list[State]], list[tuple[Any, ...]]] | None = None):
        self.step = tick
        self.slots_of_all = slots_of_all
        self.ticks: defaultdict[int, tuple[list[int], list[str], list[Any]]] = defaultdict(lambda: ([], [], []))
        self.counted: defaultdict[int, Counter[tuple[Any, ...]]] = defaultdict(Counter)

    def extend(self, times: list[int], keys: list[str], states: list[State]) -> None:
        """Trials in close-time order: each tick's run is found by bisection and added as slices."""
        low, count, step = 0, len(times), self.step
        while low < count:
            tick = ceil_to(times[low], step)
            high = bisect_right(times, tick, low)
            if self.slots_of_all is None:
                group = self.ticks[tick]
                group[0].extend(times[low:high])
                group[1].extend(keys[low:high])
                group[2].extend(states[low:high])
            else:
                self.counted[tick].update(self.slots_of_all(states[low:high]))
            low = high

    def add_slots(self, ticks: Mapping[int, list[tuple[Any, ...]] | Mapping[tuple[Any, ...], int]]) -> None:
        """Slot tuples already grouped by tick (by profile): a list of them, or how many closed with each."""
        for tick, slots in ticks.items():
            self.counted[tick].update(slots)

    def append(self, time: int, key: str, state: State) -> None:
        if self.slots_of_all is not None:
            self.counted[ceil_to(time, self.step)].update(self.slots_of_all([state]))
            return
        group = self.ticks[ceil_to(time, self.step)]
        group[0].append(time)
        group[1].append(key)
        group[2].append(state)


@dataclass
class Bucket:
    """Open trials of the dependence keys that hash to one bucket, with the schedule of their close times.

    Its trials are computed once for every monitor in `recipients` (monitors whose trial and variable sections agree),
    and each progress step gives one `Report` per recipient, in their order.
    """

    index: int
    layout: TrialLayout
    recipients: tuple[Recipient, ...]
    partitions: int
    lateness: int
    tick: int
    trials: dict[str, State] = field(default_factory=dict)
    """Open trials by dependence key: a dict, or where the bucket `packs` them a native `PackedTrials` table."""
    closing: CloseSchedule = field(default_factory=CloseSchedule)
    due: list[tuple[int, str, State]] = field(default_factory=list)
    """Trials closed by a closing event, with the time of that event, until their tick is final."""
    high: dict[int, int] = field(default_factory=dict)
    idle: set[int] = field(default_factory=set)
    through: int | None = None
    unmatched: int = 0
    max_open: int | None = None
    """Open trials the bucket keeps at most: beyond it, the newest trials are not kept, and counted (`evicted`)."""
    evicted: int = 0
    first_opening: int | None = None
    """The event time of the first event of an opening kind received (see `Report.first_opening`)."""
    ever_evicted: bool = False
    ended_early: bool = False
    """Whether a trial ended before its scheduled close (an event of its key came later): closing then checks each entry."""
    kind_rank: dict[str, int] = field(default_factory=dict)
    """Each event kind's place in `input.kinds`: how events of equal time from different partitions are ordered."""
    arrivals: LatenessBuffer | None = None
    """Fed by several partitions: their events, held until every partition still delivering has gone past their time,
    so a key's events fold in event-time order whichever partition each came from (an applicant's attributes read from
    their own file before the decision that closes the trial)."""

    openings: tuple[int, int] = (0, 0)
    """For monitors that count open trials: (trials reported as opened, trials closed) over every report so far."""
    panes: list[Panes] | None = None
    """Per recipient, the panes of its windows over raw events in the ticks not yet final; None where no recipient has any."""

    def __post_init__(self) -> None:
        if self.panes is None and any(recipient.windows for recipient in self.recipients):
            self.panes = [Panes(recipient.windows, self.tick) for recipient in self.recipients]
        if self.partitions > 1 and self.arrivals is None:
            self.arrivals = LatenessBuffer(self.kind_rank)
        if type(self.trials) is dict:
            if self.packs and not self.trials:
                self.trials = PackedTrials(self.layout.close_after)  # type: ignore[assignment]
            elif self.layout.profiles is None:
                self.trials = Trials(self.trials)

    @property
    def packs(self) -> bool:
        """Whether open trials go in a native `PackedTrials` table: where it was compiled, for trials counted by profile
        that close a fixed time after opening and on no closing event."""
        layout = self.layout
        return PackedTrials is not None and self.by_profile and layout.close_after is not None and not layout.closing_kinds and layout.open_when is None

    @property
    def by_profile(self) -> bool:
        """Whether closed trials are reported as bare slot tuples, for the merge to count and turn into cells: when trials
        need not be kept one by one and equal slots mean equal variables."""
        return self.layout.exact_slots and not any(recipient.keep_trials or recipient.counts_open for recipient in self.recipients)

    @property
    def folds_columns(self) -> bool:
        """Whether events may come as `EventColumns`, folded from their structs: one partition feeds the bucket."""
        return self.arrivals is None

    def receive(self, partition: int, events: list[Event] | EventColumns, high: int | None, idle: bool = False) -> list[Report]:
        """Fold a partition's events (in order) into their trials, note the partition's latest time, report ticks now final
        (no reports when none became final).

        An `idle` partition (at the end of its log for a while) stops holding the watermark back until it has events again.
        """
        if high is not None and high > self.high.get(partition, high - 1):
            self.high[partition] = high
        if idle:
            self.idle.add(partition)
        elif events:
            self.idle.discard(partition)
        if self.arrivals is not None:
            assert type(events) is list
            self.arrivals.hold(events, source=partition)
            events = self._due_arrivals()
        self._fold(events)
        return self._advance()

    def _due_arrivals(self) -> list[Event]:
        """The held events every partition still delivering has gone past (all of them once every partition is quiet)."""
        assert self.arrivals is not None
        if len(self.high.keys() | self.idle) < self.partitions:
            return []  # a partition has not delivered yet
        active = [high for partition, high in self.high.items() if partition not in self.idle]
        return self.arrivals.release(min(active)) if active else self.arrivals.drain()

    def _fold(self, events: list[Event] | EventColumns) -> None:
        """Fold events, in event-time order, into their trials; beyond `max_open`, the newest trials are not kept."""
        columns = type(events) is EventColumns
        if self.panes is not None:
            admitted = events.events() if columns else events  # type: ignore[union-attr]
            for panes in self.panes:
                panes.take(admitted)  # type: ignore[arg-type]
        if columns:
            self._note_openings_of(events.times, events.structs, events.kind_of)  # type: ignore[union-attr]
        else:
            self._note_openings(events)  # type: ignore[arg-type]
        if type(self.trials) is PackedTrials:
            self.unmatched += self.trials.fold_columns(events, self.layout) if columns else self.trials.fold(events, self.layout)
        else:
            closing_times: list[int] = []
            closing_keys: list[str] = []
            due = len(self.due)
            self.unmatched += (fold_columns if columns else fold)(self.trials, events, self.layout, closing_times, closing_keys, self.due)
            self.closing.push_all(closing_times, closing_keys)
            if len(self.due) > due and not self.layout.closing_kinds:
                self.ended_early = True  # a trial ended before its scheduled close: the schedule may name its key's next trial
        if self.max_open is not None and len(self.trials) > self.max_open:
            self._evict(len(self.trials) - self.max_open)

    def _note_openings(self, events: list[Event]) -> None:
        """Keep the earliest opening event: a partition's events come in event-time order, so a batch's is its first
        event of an opening kind (most batches: the first event)."""
        opening = self.layout.opens_on
        self._note_opening(next((event.time for event in events if opening is None or event.kind in opening), None))

    def _note_openings_of(self, times: list[int], structs: list[Any], kind_of: dict[type, str]) -> None:
        """`_note_openings` for events given as their times and decoded structs (see `EventColumns`)."""
        opening = self.layout.opens_on
        self._note_opening(next((time for time, typed in zip(times, structs) if opening is None or kind_of[typed.__class__] in opening), None))

    def _note_opening(self, first: int | None) -> None:
        if first is not None and (self.first_opening is None or first < self.first_opening):
            self.first_opening = first

    def idle_reports(self) -> list[Report]:
        """Reports that only say the bucket's one partition is quiet: kept where the partition is read, the bucket cannot
        close trials by other partitions' time, so the merges stop waiting for it until it reports again."""
        through = -FINISHED if self.through is None else self.through
        oldest = self._oldest_open()
        return [Report(self.index, through, {}, idle=True, oldest_open=oldest, first_opening=self.first_opening) for _ in self.recipients]

    def _oldest_open(self) -> int:
        """The earliest opening time among open trials and trials closed in ticks not yet final (a scan, made only for
        recipients that need opening order); FINISHED when none is held."""
        if not any(recipient.opening_order for recipient in self.recipients):
            return FINISHED
        earliest = self.layout.earliest_opened
        open_now, due = earliest(self.trials.values()), earliest(state for _, _, state in self.due)
        return min(FINISHED if open_now is None else open_now, FINISHED if due is None else due)

    def _evict(self, count: int) -> None:
        """Drop the `count` open trials that close last (with dicts: that opened last), keeping memory bounded: the
        trials already open are kept and close in their time, so estimates go on; the newest are not kept."""
        if type(self.trials) is PackedTrials:
            self.trials.evict(count, self.layout.profiles.table)  # type: ignore[union-attr]
        else:
            for key in list(islice(reversed(self.trials), count)):  # dicts keep keys in the order their trials opened
                del self.trials[key]
        self.evicted += count
        self.ever_evicted = True

    def finish(self) -> list[Report]:
        """The input ended: close every open trial and report all remaining ticks, up to where the ended input's watermark reaches."""
        if self.arrivals is not None:
            self._fold(self.arrivals.drain())
        reports = self._report(FINISHED)
        if self.high:
            end = ceil_to(max(self.high.values()) - self.lateness, self.tick) - self.tick
            for report in reports:
                report.end = end
        return reports

    def _advance(self) -> list[Report]:
        if len(self.high.keys() | self.idle) < self.partitions:
            return []
        active = [high for partition, high in self.high.items() if partition not in self.idle]
        if not active:
            return []
        watermark = min(active) - self.lateness
        through = ceil_to(watermark, self.tick) - self.tick
        if self.through is not None and through <= self.through:
            return []
        return self._report(through)

    def _report(self, through: int) -> list[Report]:
        finished = through == FINISHED
        closed = ClosedTrials(self.tick, self.layout.profiles.slots_of_all if self.by_profile else None)  # type: ignore[union-attr]
        unfinished = 0
        counts_open = any(recipient.counts_open for recipient in self.recipients)
        left: list[State] = []  # at the end, the trials that never closed: open still, for monitors that count open trials
        if type(self.trials) is PackedTrials:  # every trial has a close time: at the end all are closed
            closed.add_slots(self.trials.take_ended(None if finished else through, self.tick))  # type: ignore[union-attr]
            closed.add_slots(self.trials.close_due(None if finished else through, self.tick, self.layout.profiles.table))  # type: ignore[union-attr]
        else:
            times, keys = self.closing.pop_due(None if finished else through)
            if self.layout.closing_kinds or self.ever_evicted or self.ended_early:  # a trial may be gone (closed early or evicted), its key reopened since
                self._close_current(times, keys, closed)
            elif keys:  # every entry is its key's current trial
                closed.extend(times, keys, list(map(self.trials.pop, keys)))
            if finished:
                unfinished = len(self.trials)
                left = list(self.trials.values()) if counts_open else []
                self.trials.clear()
        still_due = []
        for closed_at, key, state in self.due:
            if closed_at <= through:
                closed.append(closed_at, key, state)
            else:
                still_due.append((closed_at, key, state))
        self.due = still_due
        opened = None
        if counts_open:
            done = [state for _, _, states in closed.ticks.values() for state in states]
            held = chain(self.trials.values(), left, (state for _, _, state in self.due))
            opened, self.openings = openings_by_tick(self.layout.opened, held, done, self.through, through, self.tick, self.openings)
        self.through = through
        unmatched, self.unmatched = self.unmatched, 0
        evicted, self.evicted = self.evicted, 0
        oldest = self._oldest_open()
        every = self._deltas(closed)
        if self.panes is not None:
            for panes, deltas in zip(self.panes, every):
                for tick, cells in panes.pop_through(through).items():
                    deltas.setdefault(tick, TickDelta()).windows = cells
        for recipient, deltas in zip(self.recipients, every):
            for tick, count in (opened or {}).items() if recipient.counts_open else ():
                deltas.setdefault(tick, TickDelta()).opened = count
        return [Report(self.index, through, deltas, unmatched, unfinished, evicted, oldest_open=oldest, first_opening=self.first_opening) for deltas in every]

    def _close_current(self, times: list[int], keys: list[str], closed: ClosedTrials) -> None:
        """Close the trials that are due now, skipping entries whose trial a closing event has already closed.

        An entry closes its key's current trial when that trial is due at the entry's time: its own trial, or one
        reopened at the same instant, which is due then as well.
        """
        trials, after, opened = self.trials, self.layout.close_after, self.layout.opened
        for closes, key in zip(times, keys):
            state = trials.get(key)
            if state is not None and opened(state) + after == closes:  # type: ignore[operator]
                del trials[key]
                closed.append(closes, key, state)

    def _deltas(self, closed: ClosedTrials) -> list[dict[int, TickDelta]]:
        """Per recipient, the closed trials per tick: their slot tuples (see `by_profile`), else turned into outcomes one
        by one. Each recipient gets deltas of its own, since a merge takes ownership of what it receives."""
        if self.by_profile:
            return [{tick: TickDelta(unsettled=dict(slots)) for tick, slots in closed.counted.items()} for _ in self.recipients]
        every: list[dict[int, TickDelta]] = [{} for _ in self.recipients]
        variables, slots, opened = self.layout.variables, self.layout.slots, self.layout.opened
        if self.layout.exact_slots:  # equal slots, equal outcomes: each distinct slot tuple is turned into cells once
            counted = [SlotOutcomes(recipient.outcomes, variables) for recipient in self.recipients]
            for tick, (times, keys, states) in closed.ticks.items():
                slots_of, opened_at = self.layout.slots_of_all(states), self.layout.opened_of_all(states)
                for recipient, outcome_of, recipient_deltas in zip(self.recipients, counted, every):
                    delta = recipient_deltas.setdefault(tick, TickDelta())
                    outcomes = list(map(outcome_of, slots_of))
                    if recipient.keep_trials:
                        delta.trials.extend(map(TrialOutcome, times, keys, map(_CELLS, outcomes), map(_TOTALS, outcomes), opened_at))
                    else:
                        for cells, totals in outcomes:
                            delta.count(cells, totals)
            return every
        for tick, (times, keys, states) in closed.ticks.items():
            deltas = [recipient_deltas.setdefault(tick, TickDelta()) for recipient_deltas in every]
            for closed_at, key, state in zip(times, keys, states):
                values, opened_at = variables(slots(state)), opened(state)
                for recipient, delta in zip(self.recipients, deltas):
                    delta.add(recipient.outcomes.of(closed_at, key, values, opened_at), recipient.keep_trials)
        return every

    def snapshot(self) -> Bucket:
        """A copy for the recovery store: the compiled layout and the (immutable) trial states are shared, the containers copied."""
        clone = copy.copy(self)
        clone.trials = self.trials.copy() if type(self.trials) is PackedTrials else type(self.trials)(self.trials)
        clone.closing = self.closing.copy()
        clone.due = list(self.due)
        clone.high = dict(self.high)
        clone.idle = set(self.idle)
        clone.arrivals = None if self.arrivals is None else self.arrivals.copy()
        clone.panes = None if self.panes is None else [panes.copy() for panes in self.panes]
        return clone


def openings_by_tick(
    opened: Callable[[State], int], held: Iterable[State], done: list[State], since: int | None, through: int, tick: int, so_far: tuple[int, int]
) -> tuple[dict[int, int], tuple[int, int]]:
    """How many trials opened in each tick up to `through` that the last report (through `since`) left out, for
    monitors that count open trials: a scan of the trials `held` and those closed now (`done`), and the new (trials
    reported as opened, trials closed) `so_far`. The trials known to have opened by `through` are those held that
    opened by then and every one closed; whatever the ticks do not account for (a trial that came back from an idle
    partition dated before the last report, one evicted after it was reported) goes to the first tick after `since`,
    so openings less closes is always the trials held."""
    since = -FINISHED if since is None else since
    counted: Counter[int] = Counter()
    known = 0
    for at in map(opened, chain(held, done)):
        if at <= through:
            known += 1
            if at > since:
                counted[ceil_to(at, tick)] += 1
    reported, closes = so_far
    closes += len(done)
    rest = known - len(done) + closes - reported - sum(counted.values())
    if rest:
        counted[since + tick] += rest
    return dict(counted), (reported + sum(counted.values()), closes)
