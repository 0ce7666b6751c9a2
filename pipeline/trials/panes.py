"""Windows over raw events, where the events are read: each bucket sums the events it receives into panes, one per
evaluation tick, window and group, and reports a pane once its tick is final; the merge slides the window over the
panes of every bucket (`fairstream.monitoring.event_windows`). A pane holds [count, sum, min, max], never the events."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from fairstream.language.expressions import Expression
from fairstream.records.events import Event
from fairstream.records.timefmt import ceil_to

PaneKey = tuple[str, str | None]
"""(window, group): group None for a window without `by`."""


@dataclass(frozen=True)
class WindowPlan:
    """A compiled `windows:` entry: which events it reads and what of them it aggregates."""

    name: str
    kind: str
    field: str | None
    aggregate: str
    over: int
    by: str | None = None
    where: Expression | None = None

    def value_of(self, fields: dict) -> float | None:
        """What one event adds: 1 for a count (of events carrying the field, where one is named), else the field's number;
        None where the event does not take part (the field missing, or not a number)."""
        if self.field is None:
            return 1.0
        value = fields.get(self.field)
        if value is None or isinstance(value, str) or (isinstance(value, float) and not math.isfinite(value)):
            return None
        return 1.0 if self.aggregate == "count" else float(value)


def group_name(value: object) -> str | None:
    """A `by` field's value as a group name (bools as `true`/`false`, as group variables name them); None where missing."""
    if value is None:
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


def add_to_pane(cell: list[float] | None, value: float) -> list[float]:
    """A pane cell [count, sum, min, max] with one more event."""
    if cell is None:
        return [1.0, value, value, value]
    cell[0] += 1
    cell[1] += value
    if value < cell[2]:
        cell[2] = value
    if value > cell[3]:
        cell[3] = value
    return cell


def merge_panes(into: dict[PaneKey, list[float]], other: dict[PaneKey, list[float]]) -> None:
    """Add another reporter's pane cells of the same tick."""
    for key, cell in other.items():
        mine = into.get(key)
        if mine is None:
            into[key] = list(cell)
        else:
            mine[0] += cell[0]
            mine[1] += cell[1]
            mine[2] = min(mine[2], cell[2])
            mine[3] = max(mine[3], cell[3])


class Panes:
    """One reporter's panes not yet final: per tick, per (window, group), the aggregate of the events it received."""

    def __init__(self, plans: tuple[WindowPlan, ...], tick: int):
        self.plans = plans
        self.tick = tick
        self.ticks: dict[int, dict[PaneKey, list[float]]] = {}

    def take(self, events: Iterable[Event]) -> None:
        """Add the events (admitted, in any order) to the panes of their ticks."""
        plans, step, ticks = self.plans, self.tick, self.ticks
        for event in events:
            for plan in plans:
                if event.kind != plan.kind:
                    continue
                fields = event.fields
                if plan.where is not None and plan.where.function(fields) is not True:
                    continue
                value = plan.value_of(fields)
                if value is None:
                    continue
                group = None
                if plan.by is not None:
                    group = group_name(fields.get(plan.by))
                    if group is None:
                        continue
                panes = ticks.setdefault(ceil_to(event.time, step), {})
                key = (plan.name, group)
                panes[key] = add_to_pane(panes.get(key), value)

    def pop_through(self, through: int) -> dict[int, dict[PaneKey, list[float]]]:
        """The panes of every tick up to `through` (now final), taken out."""
        done = {tick: panes for tick, panes in self.ticks.items() if tick <= through}
        for tick in done:
            del self.ticks[tick]
        return done

    def copy(self) -> Panes:
        clone = Panes(self.plans, self.tick)
        clone.ticks = {tick: {key: list(cell) for key, cell in panes.items()} for tick, panes in self.ticks.items()}
        return clone
