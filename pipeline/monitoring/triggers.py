"""Triggers: a spec's conditions over what a monitor computes at each evaluation (window values, each part's gap,
ratio and status, each group's rate and counts), each a `fairness.trigger` record when it turns true (`raised`) and
when it turns false again (`cleared`) (pure). A condition that cannot be evaluated (a value it reads is missing or
suppressed) leaves the trigger as it stood."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fairstream.language.expressions import Expression
from fairstream.records.envelope import TRIGGER, stamp

RAISED, CLEARED = "raised", "cleared"
PART_VALUES = ("gap", "ratio", "status")
"""Each part's numbers (and status) a trigger reads as `<part>.<value>`."""
GROUP_TABLES = ("rate", "hits", "trials")
"""Each part's tables by group a trigger reads as `<part>.<table>['<group>']`."""
CLOSED_TRIALS = "closed_trials"
OPEN_TRIALS = "open_trials"


class Table(dict):
    """Numbers by group; `missing` is what a group not in it reads as (0 for counts and sums of events, else None)."""

    missing: float | None = None


@dataclass(frozen=True)
class TriggerPlan:
    """A compiled trigger: its name, its condition and its message."""

    name: str
    when: Expression
    message: str


@dataclass
class Triggers:
    """The triggers of one monitor and which of them stand raised."""

    plans: tuple[TriggerPlan, ...]
    raised: set[str] = field(default_factory=set)
    needed: frozenset[str] = field(init=False)
    """The names some condition reads: the values worth gathering at an evaluation."""

    def __post_init__(self) -> None:
        self.needed = frozenset(name for plan in self.plans for name in plan.when.names)

    def records(self, monitor: str, values: dict[str, Any], instant: int, at: tuple[str, ...]) -> list[dict[str, Any]]:
        """The records of the triggers that turn at this evaluation, whose values are `values`."""
        out = []
        for plan in self.plans:
            holds = plan.when.function(values)
            if holds is None or holds == (plan.name in self.raised):
                continue
            state = RAISED if holds else CLEARED
            (self.raised.add if holds else self.raised.discard)(plan.name)
            body = {"trigger": plan.name, "state": state, "when": plan.when.source, "values": read_values(plan, values), "message": plan.message}
            out.append(stamp(body, monitor, TRIGGER, instant, plan.name, state, *at))
        return out


def read_values(plan: TriggerPlan, values: dict[str, Any]) -> dict[str, Any]:
    """The values the condition read, named as it names them (`screens_7d['a']`)."""
    read: dict[str, Any] = {}
    for name, group in plan.when.reads:
        value = values.get(name)
        if group is None:
            read[name] = value
        else:
            read[f"{name}['{group}']"] = None if value is None else value.get(group, getattr(value, "missing", None))
    return read


def trigger_values(
    needed: frozenset[str], parts: dict[str, Any], windows: dict[str, Any] | None, window_missing: dict[str, float | None], closed: int, opened: int
) -> dict[str, Any]:
    """The `needed` values a trigger's condition reads at an evaluation: of the published parts (a suppressed cell
    reads as missing), the window values, the trials closed and those open (opened less closed)."""
    values: dict[str, Any] = {CLOSED_TRIALS: closed, OPEN_TRIALS: opened - closed}
    for part, body in parts.items():
        for name in PART_VALUES:
            if f"{part}.{name}" in needed:
                values[f"{part}.{name}"] = body.get(name)
        for table in GROUP_TABLES:
            if f"{part}.{table}" in needed:
                values[f"{part}.{table}"] = Table({group: cell.get("estimate" if table == "rate" else table) for group, cell in body.get("groups", {}).items()})
    for name, value in (windows or {}).items():
        if isinstance(value, dict) and name in needed:
            value = Table(value)
            value.missing = window_missing.get(name)
        values[name] = value
    return values


def raised_spans(alerts: list[dict[str, Any]], moment: Callable[[dict[str, Any]], Any], end: Any) -> list[tuple[str, Any, Any]]:
    """(trigger, from, to) for every stretch a trigger stood raised; one still raised runs to `end`."""
    opened: dict[str, Any] = {}
    spans = []
    for alert in alerts:
        if alert.get("type") != TRIGGER:
            continue
        if alert["state"] == "raised":
            opened.setdefault(alert["trigger"], moment(alert))
        elif alert["trigger"] in opened:
            spans.append((alert["trigger"], opened.pop(alert["trigger"]), moment(alert)))
    spans.extend((trigger, start, end) for trigger, start in opened.items())
    return spans
