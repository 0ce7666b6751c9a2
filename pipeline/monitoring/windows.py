"""Which closed trials the counts cover, chosen once by the compiler: every one (`Cumulative`), those of the last span
(`Sliding`), or those of the current period (`Periodic`); a window over trials one by one selects them by opened time (pure)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from fairstream.trials.outcomes import TickDelta, TrialOutcome

if TYPE_CHECKING:
    from fairstream.monitoring.counts import Counts

By = Literal["closed", "opened"]


class WindowSteps:
    """What a window does at each step; the cumulative window does nothing at any of them."""

    selects: ClassVar[bool] = False
    """Whether trials counted one by one are selected by the time they opened."""

    def expire(self, counts: Counts, tick: int) -> None:
        """Take out what has left the window by `tick`."""

    def inside(self, counts: Counts, trial: TrialOutcome, tick: int) -> bool:
        """Whether a trial closing by `tick` opened within the window's span."""
        return True

    def keep(self, counts: Counts, tick: int, delta: TickDelta) -> None:
        """Remember a tick's counts to take them out later."""

    def keep_trial(self, counts: Counts, trial: TrialOutcome) -> None:
        """Remember a trial counted one by one to take it out later."""

    def after_tick(self, counts: Counts, tick: int) -> None:
        """What the window does once a tick has been evaluated (a period ends)."""


@dataclass(frozen=True)
class Cumulative(WindowSteps):
    """Every trial closed since the run began."""

    by: ClassVar[By] = "closed"


@dataclass(frozen=True)
class Sliding(WindowSteps):
    """The trials that closed (or, by opened, opened) less than `length` before the evaluation."""

    length: int = 0
    by: By = "closed"
    selects: ClassVar[bool] = True

    def expire(self, counts: Counts, tick: int) -> None:
        while counts.history and counts.history[0][0] <= tick - self.length:
            counts.count(counts.history.popleft()[1], sign=-1)
        while counts.opened and counts.opened[0][0] <= tick - self.length:
            counts.remove_trial(heapq.heappop(counts.opened)[2])

    def inside(self, counts: Counts, trial: TrialOutcome, tick: int) -> bool:
        return trial.opened > tick - self.length

    def keep(self, counts: Counts, tick: int, delta: TickDelta) -> None:
        counts.history.append((tick, delta))

    def keep_trial(self, counts: Counts, trial: TrialOutcome) -> None:
        heapq.heappush(counts.opened, (trial.opened, trial.key, trial))


@dataclass(frozen=True)
class Periodic(WindowSteps):
    """The trials of the current period of `length`: the counts start again at every multiple of it."""

    length: int = 0
    by: By = "closed"
    selects: ClassVar[bool] = True

    def inside(self, counts: Counts, trial: TrialOutcome, tick: int) -> bool:
        return counts.period_start is None or trial.opened > counts.period_start

    def after_tick(self, counts: Counts, tick: int) -> None:
        if tick % self.length == 0:
            counts.new_period(tick)


Window = Cumulative | Sliding | Periodic
