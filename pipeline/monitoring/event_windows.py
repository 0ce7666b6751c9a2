"""Windows over raw events at the merge: every reporter's panes of a tick added, each window slid over the last
`over` of event time, its value per group read at each evaluation (pure). Memory: a pane per tick with events in the
span, per window and group; min and max through monotonic queues, so each pane enters and leaves once."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
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


class SlidingWindows:
    """The spec's windows over raw events as they stand at the last tick taken: per window, its slide per group, the
    groups in name order (None for a window without `by`)."""

    def __init__(self, plans: tuple[WindowPlan, ...], max_groups: int = 256):
        self.plans = plans
        self.max_groups = max_groups
        self.slides: dict[str, dict[str | None, Slide]] = {plan.name: {} for plan in plans}

    def advance(self, tick: int, panes: dict[PaneKey, list[float]] | None) -> None:
        """Take a final tick's panes (every reporter's, added), then let each window's span end at `tick`."""
        for window, group in sorted(panes or (), key=_order):
            self._slide(window, group).add(tick, panes[(window, group)])  # type: ignore[index]
        for plan in self.plans:
            for slide in self.slides[plan.name].values():
                slide.expire(tick - plan.over)

    def _slide(self, window: str, group: str | None) -> Slide:
        """The group's slide; a new group past `max_groups` joins `OTHER_GROUPS` (groups stay in name order)."""
        groups = self.slides[window]
        slide = groups.get(group)
        if slide is not None:
            return slide
        if group is not None and len(groups) >= self.max_groups:
            group = OTHER_GROUPS
            if group in groups:
                return groups[group]
        slide = groups[group] = Slide()
        if len(groups) > 1:
            self.slides[window] = dict(sorted(groups.items(), key=lambda item: "" if item[0] is None else item[0]))
        return slide

    def values(self) -> dict[str, Any]:
        """Each window's value (a number, or null for a mean, min or max of no event), or per group where it has `by`;
        a group once seen stays, at 0 events."""
        out: dict[str, Any] = {}
        for plan in self.plans:
            groups = self.slides[plan.name]
            if plan.by is None:
                out[plan.name] = groups.get(None, Slide()).value(plan.aggregate)
            else:
                out[plan.name] = {group: slide.value(plan.aggregate) for group, slide in groups.items()}
        return out


def _order(key: PaneKey) -> tuple[str, str]:
    return key[0], "" if key[1] is None else key[1]


def window_series(estimates: list[dict[str, Any]], moment: Callable[[dict[str, Any]], Any], missing: float | None = None) -> dict[str, dict[str, tuple[list[Any], list[Any]]]]:
    """Per window, per group ("" for a window without `by`), its (times, values) read back from the estimates that
    carry it, at `moment(record)`; a null value as `missing`."""
    series: dict[str, dict[str, tuple[list[Any], list[Any]]]] = {}
    for record in estimates:
        for name, value in (record.get("windows") or {}).items():
            groups = value if isinstance(value, dict) else {"": value}
            for group, number in groups.items():
                times, values = series.setdefault(name, {}).setdefault(group, ([], []))
                times.append(moment(record))
                values.append(missing if number is None else number)
    return series
