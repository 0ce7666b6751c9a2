"""Windows over raw events at the merge: every reporter's panes of a tick added, each window slid over the last
`over` of event time, its value per group read at each evaluation (pure). Memory: a pane per tick with events in the
span, per window and group; min and max through monotonic queues, so each pane enters and leaves once."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from fairstream.trials.panes import PaneKey, WindowPlan

OTHER_GROUPS = "(other)"
"""Where a window's events go once it has `max_groups` groups: memory stays bounded whatever its `by` field holds."""


@dataclass
class Slide:
    """One window's one group: its panes in the span, their running count and sum, and queues of candidate extremes."""

    panes: deque[tuple[int, float, float]] = field(default_factory=deque)
    count: float = 0.0
    total: float = 0.0
    least: deque[tuple[int, float]] = field(default_factory=deque)
    greatest: deque[tuple[int, float]] = field(default_factory=deque)

    def add(self, tick: int, cell: list[float]) -> None:
        count, total, low, high = cell
        self.panes.append((tick, count, total))
        self.count += count
        self.total += total
        while self.least and self.least[-1][1] >= low:
            self.least.pop()
        self.least.append((tick, low))
        while self.greatest and self.greatest[-1][1] <= high:
            self.greatest.pop()
        self.greatest.append((tick, high))

    def expire(self, oldest: int) -> None:
        """Drop the panes of ticks at or before `oldest`."""
        panes = self.panes
        while panes and panes[0][0] <= oldest:
            _, count, total = panes.popleft()
            self.count -= count
            self.total -= total
        if not panes:
            self.count = self.total = 0.0  # no rounding residue once the span is empty
        for extremes in (self.least, self.greatest):
            while extremes and extremes[0][0] <= oldest:
                extremes.popleft()

    def value(self, aggregate: str) -> float | None:
        if aggregate == "count":
            return round(self.count)
        if aggregate == "sum":
            return self.total
        if not self.panes:
            return None
        if aggregate == "mean":
            return self.total / self.count
        return self.least[0][1] if aggregate == "min" else self.greatest[0][1]


@dataclass
class SlidingWindows:
    """The spec's windows over raw events as they stand at the last tick taken."""

    plans: tuple[WindowPlan, ...]
    max_groups: int = 256
    slides: dict[PaneKey, Slide] = field(default_factory=dict)

    def advance(self, tick: int, panes: dict[PaneKey, list[float]] | None) -> None:
        """Take a final tick's panes (every reporter's, added), then let each window's span end at `tick`."""
        for key in sorted(panes or (), key=_order):
            window, group = key
            slide = self.slides.get(key)
            if slide is None and group is not None and self._groups(window) >= self.max_groups:
                key = (window, OTHER_GROUPS)
                slide = self.slides.get(key)
            if slide is None:
                slide = self.slides[key] = Slide()
            slide.add(tick, panes[(window, group)])  # type: ignore[index]
        over = {plan.name: plan.over for plan in self.plans}
        for (window, _), slide in self.slides.items():
            slide.expire(tick - over[window])

    def _groups(self, window: str) -> int:
        return sum(1 for name, group in self.slides if name == window and group is not None)

    def values(self) -> dict[str, Any]:
        """Each window's value (a number, or null for a mean, min or max of no event), or per group where it has `by`;
        a group once seen stays, at 0 events."""
        out: dict[str, Any] = {}
        for plan in self.plans:
            if plan.by is None:
                slide = self.slides.get((plan.name, None))
                out[plan.name] = (slide or Slide()).value(plan.aggregate)
            else:
                out[plan.name] = {
                    group: slide.value(plan.aggregate) for (name, group), slide in sorted(self.slides.items(), key=lambda item: _order(item[0])) if name == plan.name
                }
        return out


def _order(key: PaneKey) -> tuple[str, str]:
    return key[0], "" if key[1] is None else key[1]
