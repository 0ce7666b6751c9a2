"""How a trial's events become its variables: per event kind, which slots it fills and how (pure, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pipeline.events import Event
from pipeline.spec.expressions import Expression

NEVER = 2**62
"""Close time of a trial that closes only on a closing event (or at the end of the input)."""

OPENED, CLOSES, SEQ = 0, 1, 2
"""Positions in a trial's state list before its variable slots."""
_SLOTS = 3


@dataclass(frozen=True)
class Capture:
    """One event kind feeding one variable slot: first/last value (field or expression) or existence."""

    slot: int
    mode: Literal["first", "last", "exists"]
    field: str | None = None
    expr: Expression | None = None
    within: int | None = None
    where: Expression | None = None

    def value(self, fields: dict[str, Any]) -> Any:
        if self.field is not None:
            return fields[self.field]
        assert self.expr is not None
        return self.expr.evaluate(fields)


@dataclass(frozen=True)
class TrialLayout:
    """Compiled trial lifecycle and variable extraction; a trial's state is a list `[opened, closes, seq, *slots]`."""

    slot_names: tuple[str, ...]
    captures: dict[str, tuple[Capture, ...]]
    derived: tuple[tuple[str, Expression], ...]
    defaults: dict[str, Any]
    opens_on: frozenset[str] | None
    close_on: frozenset[str]
    close_after: int | None

    def may_open(self, kind: str) -> bool:
        return self.opens_on is None or kind in self.opens_on

    def open(self, time: int, seq: int) -> list[Any]:
        closes = time + self.close_after if self.close_after is not None else NEVER
        return [time, closes, seq, *([None] * len(self.slot_names))]

    def observe(self, state: list[Any], event: Event) -> bool:
        """Fold one event into the trial; True when the event closes the trial."""
        for capture in self.captures.get(event.kind, ()):
            index = capture.slot + _SLOTS
            if capture.mode == "first":
                if state[index] is None:
                    state[index] = capture.value(event.fields)
            elif capture.mode == "last":
                state[index] = capture.value(event.fields)
            elif state[index] is not True:
                elapsed = event.time - state[OPENED]
                if capture.within is not None and not 0 <= elapsed <= capture.within:
                    continue
                if capture.where is not None and capture.where.evaluate(event.fields) is not True:
                    continue
                state[index] = True
        return event.kind in self.close_on

    def values(self, state: list[Any]) -> dict[str, Any]:
        """The trial's final variables: captured slots, defaults for what never came, then derived expressions."""
        values = dict(zip(self.slot_names, state[_SLOTS:]))
        for name, value in values.items():
            if value is None:
                values[name] = self.defaults.get(name)
        for name, expr in self.derived:
            values[name] = expr.evaluate(values)
            if values[name] is None:
                values[name] = self.defaults.get(name)
        return values
