"""A bucket of trials: opens trials on their first event, closes them by event time or on a closing event, and reports closed trials per tick (pure)."""

from __future__ import annotations

import copy
import heapq
from dataclasses import dataclass, field
from typing import Any

from pipeline.events import Event
from pipeline.timefmt import ceil_to
from pipeline.trials.layout import CLOSES, NEVER, SEQ, TrialLayout
from pipeline.trials.outcomes import Outcomes, TickDelta

FINISHED = NEVER
"""`through` of a bucket whose input has ended: every trial with a close time is closed and reported; trials that wait for a closing event are counted as unfinished."""


@dataclass
class Report:
    """A bucket's progress: every tick up to `through` is final; `deltas` holds the non-empty ones."""

    bucket: int
    through: int
    deltas: dict[int, TickDelta]
    unmatched: int = 0
    unfinished: int = 0


@dataclass
class Bucket:
    """Open trials of the dependence keys that hash to one bucket, with a heap of their close times."""

    index: int
    layout: TrialLayout
    outcomes: Outcomes
    partitions: int
    lateness: int
    tick: int
    keep_trials: bool = False
    trials: dict[str, list[Any]] = field(default_factory=dict)
    heap: list[tuple[int, int, str]] = field(default_factory=list)
    due: list[tuple[int, str, list[Any]]] = field(default_factory=list)
    high: dict[int, int] = field(default_factory=dict)
    through: int | None = None
    seq: int = 0
    unmatched: int = 0

    def receive(self, partition: int, events: list[Event], high: int | None) -> Report | None:
        """Fold a partition's events (in order) into their trials, note the partition's latest time, report ticks now final."""
        trials = self.trials
        layout = self.layout
        for event in events:
            state = trials.get(event.key)
            if state is None:
                if not layout.may_open(event.kind):
                    self.unmatched += 1
                    continue
                self.seq += 1
                state = layout.open(event.time, self.seq)
                trials[event.key] = state
                if state[CLOSES] != NEVER:
                    heapq.heappush(self.heap, (state[CLOSES], self.seq, event.key))
            if layout.observe(state, event):
                del trials[event.key]
                self.due.append((event.time, event.key, state))
        if high is not None and high > self.high.get(partition, high - 1):
            self.high[partition] = high
        return self._advance()

    def finish(self) -> Report | None:
        """The input ended: close every open trial and report all remaining ticks."""
        return self._report(FINISHED)

    def _advance(self) -> Report | None:
        if len(self.high) < self.partitions:
            return None
        watermark = min(self.high.values()) - self.lateness
        through = ceil_to(watermark, self.tick) - self.tick
        if self.through is not None and through <= self.through:
            return None
        return self._report(through)

    def _report(self, through: int) -> Report | None:
        deltas: dict[int, TickDelta] = {}
        heap, trials = self.heap, self.trials
        while heap and (heap[0][0] <= through or through == FINISHED):
            closes, seq, key = heapq.heappop(heap)
            state = trials.get(key)
            if state is not None and state[SEQ] == seq:
                del trials[key]
                self._close(deltas, closes, key, state)
        unfinished = 0
        if through == FINISHED:
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

    def _close(self, deltas: dict[int, TickDelta], closed_at: int, key: str, state: list[Any]) -> None:
        outcome = self.outcomes.of(closed_at, key, self.layout.values(state))
        deltas.setdefault(ceil_to(closed_at, self.tick), TickDelta()).add(outcome, self.keep_trials)

    def snapshot(self) -> Bucket:
        """A copy for the recovery store: the compiled layout is shared, the trial state is copied."""
        clone = copy.copy(self)
        clone.trials = {key: list(state) for key, state in self.trials.items()}
        clone.heap = list(self.heap)
        clone.due = [(closed_at, key, list(state)) for closed_at, key, state in self.due]
        clone.high = dict(self.high)
        return clone
