"""How a trial's events become its variables: per event kind, which slots it fills and how (pure, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pipeline.events import Event
from pipeline.spec.expressions import Expression

NEVER = 2**62
"""Close time of a trial that closes only on a closing event (or at the end of the input)."""

OPENED, CLOSES, SEQ, SLOTS = 0, 1, 2, 3
"""Positions in a trial's state tuple: open time, close time, open sequence number, then the variable slots."""


@dataclass(frozen=True)
class Capture:
    """One event kind feeding one variable slot: first/last value (field or expression) or existence."""

    slot: int
    mode: Literal["first", "last", "exists"]
    field: str | None = None
    expr: Expression | None = None
    within: int | None = None
    where: Expression | None = None


@dataclass(frozen=True)
class TrialLayout:
    """Compiled trial lifecycle and variable extraction; a trial's state is a tuple `(opened, closes, seq, *slots)`."""

    slot_names: tuple[str, ...]
    captures: dict[str, tuple[Capture, ...]]
    derived: tuple[tuple[str, Expression], ...]
    defaults: dict[str, Any]
    opens_on: frozenset[str] | None
    close_on: frozenset[str]
    close_after: int | None
    slot_types: tuple[str, ...] = ()
    """The expression type (number, string, bool) of each slot; empty when unknown."""

    @property
    def exact_slots(self) -> bool:
        """Whether equal slot values always mean equal variables: no numeric slot, where 1 == 1.0 and 0.0 == -0.0 print differently."""
        return len(self.slot_types) == len(self.slot_names) and "number" not in self.slot_types

    def open(self, event: Event, seq: int) -> tuple[Any, ...]:
        """The state of a trial that `event` opens, with the event already folded in."""
        closes = event.time + self.close_after if self.close_after is not None else NEVER
        slots = [event.time, closes, seq]
        slots.extend([None] * len(self.slot_names))
        return self._fold(slots, event, self.captures.get(event.kind, ()))

    def observe(self, state: tuple[Any, ...], event: Event) -> tuple[Any, ...]:
        """The trial after one more event: a new state when the event feeds a slot (states are immutable, so snapshots share them)."""
        captures = self.captures.get(event.kind)
        if captures is None:
            return state
        return self._fold(list(state), event, captures)

    @staticmethod
    def _fold(slots: list[Any], event: Event, captures: tuple[Capture, ...]) -> tuple[Any, ...]:
        time, fields = event[1], event[3]
        for capture in captures:
            index = capture.slot + SLOTS
            mode = capture.mode
            if mode == "exists":
                if slots[index] is True:
                    continue
                if capture.within is not None and not 0 <= time - slots[OPENED] <= capture.within:
                    continue
                if capture.where is not None and capture.where.evaluate(fields) is not True:
                    continue
                slots[index] = True
            elif mode == "last" or slots[index] is None:
                slots[index] = fields[capture.field] if capture.field is not None else capture.expr.evaluate(fields)  # type: ignore[union-attr]
        return tuple(slots)

    def values(self, state: tuple[Any, ...]) -> dict[str, Any]:
        """The trial's final variables: captured slots, defaults for what never came, then derived expressions."""
        defaults = self.defaults
        values = {name: defaults.get(name) if value is None else value for name, value in zip(self.slot_names, state[SLOTS:])}
        for name, expr in self.derived:
            values[name] = expr.evaluate(values)
            if values[name] is None:
                values[name] = self.defaults.get(name)
        return values
