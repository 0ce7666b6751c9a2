"""A bucket of trials: opens trials on their first event, closes them by event time or on a closing event, and reports closed trials per tick (pure)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pipeline.events import Event
from pipeline.timefmt import ceil_to
from pipeline.trials.closing import CloseSchedule
from pipeline.trials.layout import CLOSES, NEVER, SEQ, SLOTS, TrialLayout
from pipeline.trials.outcomes import Outcomes, TickDelta

FINISHED = NEVER
"""`through` of a bucket whose input has ended: every trial with a close time is closed and reported; trials that wait for a closing event are counted as unfinished."""

MEMO_LIMIT = 4096
"""Most distinct slot tuples whose outcome a bucket remembers (a few dozen for group × prediction × label)."""


@dataclass
class Report:
    """A bucket's progress: every tick up to `through` is final; `deltas` holds the non-empty ones."""

    bucket: int
    through: int
    deltas: dict[int, TickDelta]
    unmatched: int = 0
    unfinished: int = 0


class Trials(dict):
    """Open trials by dependence key. A dict subclass on purpose: CPython's full collection untracks a plain dict
    whose values are all untracked (our immutable trial states), and the next insert re-tracks it into the youngest
    generation, so every young collection re-scans the whole table; a subclass stays tracked in the oldest one."""


@dataclass
class Bucket:
    """Open trials of the dependence keys that hash to one bucket, with the schedule of their close times."""

    index: int
    layout: TrialLayout
    outcomes: Outcomes
    partitions: int
    lateness: int
    tick: int
    keep_trials: bool = False
    trials: dict[str, tuple[Any, ...]] = field(default_factory=Trials)
    closing: CloseSchedule = field(default_factory=CloseSchedule)
    due: list[tuple[int, str, tuple[Any, ...]]] = field(default_factory=list)
    high: dict[int, int] = field(default_factory=dict)
    idle: set[int] = field(default_factory=set)
    through: int | None = None
    seq: int = 0
    unmatched: int = 0

    def __post_init__(self) -> None:
        self._memo: dict[tuple[Any, ...], tuple[Any, ...]] | None = {} if self._memoizes() else None

    def _memoizes(self) -> bool:
        """Outcomes are remembered by slot values when trials need not be kept and equal slots mean equal variables."""
        return not self.keep_trials and self.layout.exact_slots

    def receive(self, partition: int, events: list[Event], high: int | None, idle: bool = False) -> Report | None:
        """Fold a partition's events (in order) into their trials, note the partition's latest time, report ticks now final.

        An `idle` partition (at the end of its log for a while) stops holding the watermark back until it has events again.
        """
        trials, closing, due = self.trials, self.closing, self.due
        layout = self.layout
        opens_on, close_on, observe = layout.opens_on, layout.close_on, layout.observe
        for event in events:
            key, time, kind = event[0], event[1], event[2]
            state = trials.get(key)
            if state is None:
                if opens_on is not None and kind not in opens_on:
                    self.unmatched += 1
                    continue
                self.seq += 1
                state = layout.open(event, self.seq)
                if state[CLOSES] != NEVER:
                    closing.push((state[CLOSES], self.seq, key))
            else:
                state = observe(state, event)
            if kind in close_on:
                trials.pop(key, None)
                due.append((time, key, state))
            else:
                trials[key] = state
        if high is not None and high > self.high.get(partition, high - 1):
            self.high[partition] = high
        if idle:
            self.idle.add(partition)
        elif events:
            self.idle.discard(partition)
        return self._advance()

    def finish(self) -> Report | None:
        """The input ended: close every open trial and report all remaining ticks."""
        return self._report(FINISHED)

    def _advance(self) -> Report | None:
        if len(self.high.keys() | self.idle) < self.partitions:
            return None
        active = [high for partition, high in self.high.items() if partition not in self.idle]
        if not active:
            return None
        watermark = min(active) - self.lateness
        through = ceil_to(watermark, self.tick) - self.tick
        if self.through is not None and through <= self.through:
            return None
        return self._report(through)

    def _report(self, through: int) -> Report | None:
        deltas: dict[int, TickDelta] = {}
        trials, close = self.trials, self._close
        finished = through == FINISHED
        for closes, seq, key in self.closing.pop_due(None if finished else through):
            state = trials.get(key)
            if state is not None and state[SEQ] == seq:
                del trials[key]
                close(deltas, closes, key, state)
        unfinished = 0
        if finished:
            unfinished = len(trials)
            trials.clear()
        still_due = []
        for closed_at, key, state in self.due:
            if closed_at <= through:
                self._close(deltas, closed_at, key, state)
            else:
                still_due.append((closed_at, key, state))
        self.due = still_due
        self.through = through
        unmatched, self.unmatched = self.unmatched, 0
        return Report(self.index, through, deltas, unmatched, unfinished)

    def _close(self, deltas: dict[int, TickDelta], closed_at: int, key: str, state: tuple[Any, ...]) -> None:
        tick = ceil_to(closed_at, self.tick)
        delta = deltas.get(tick)
        if delta is None:
            delta = deltas[tick] = TickDelta()
        memo = self._memo
        if memo is None:
            delta.add(self.outcomes.of(closed_at, key, self.layout.values(state)), self.keep_trials)
            return
        slots = state[SLOTS:]
        counted = memo.get(slots)
        if counted is None:
            counted = self.outcomes.counted(self.layout.values(state))
            if len(memo) < MEMO_LIMIT:
                memo[slots] = counted
        delta.count(*counted)

    def snapshot(self) -> Bucket:
        """A copy for the recovery store: the compiled layout and the (immutable) trial states are shared, the containers copied."""
        clone = copy.copy(self)
        clone.trials = Trials(self.trials)
        clone.closing = self.closing.copy()
        clone.due = list(self.due)
        clone.high = dict(self.high)
        clone.idle = set(self.idle)
        clone._memo = {} if self._memo is not None else None
        return clone
