"""How a trial's events become its variables: per event kind, which slots it fills and how (pure, no I/O)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pipeline.events import Event
from pipeline.spec.expressions import Expression

OPENED, SLOTS = 0, 1
"""Positions in a trial's state tuple `(opened, slots)`: open time and the tuple of variable slots (it closes at `opened + close_after`)."""

PROFILE_LIMIT = 4096
"""Most distinct slot tuples a layout shares between trials (a few dozen for group × prediction × label)."""

MEMO_LIMIT = 4096
"""Most inputs an opener or observer remembers the resulting slots of (race × decile score: sixty)."""

State = tuple[int, tuple[Any, ...]]
Opener = Callable[[int, Mapping[str, Any]], State]
"""(event time, fields) -> the state of the trial the event opens."""
Observer = Callable[[State, int, Mapping[str, Any]], State]
"""(state, event time, fields) -> the state after the event; the same object when nothing changed."""
Step = Callable[[Any, int, int, Mapping[str, Any]], Any]
"""(slot value, trial open time, event time, fields) -> the slot's new value, or `KEEP`."""

Profiles = dict[tuple[Any, ...], tuple[Any, ...]]
"""Slot tuples shared between trials, each its own key."""
Share = Callable[[tuple[Any, ...]], tuple[Any, ...]]
"""Slot values -> the tuple that trials with those values share."""

KEEP = object()
"""What a capture step returns when the event leaves its slot as it was."""


@dataclass(frozen=True)
class Capture:
    """One event kind feeding one variable slot: first/last value (field or expression) or existence."""

    slot: int
    mode: Literal["first", "last", "exists"]
    field: str | None = None
    expr: Expression | None = None
    within: int | None = None
    where: Expression | None = None

    @property
    def inputs(self) -> frozenset[str]:
        """The event fields this capture reads."""
        if self.field is not None:
            return frozenset((self.field,))
        source = self.expr if self.expr is not None else self.where
        return source.names if source is not None else frozenset()

    def reader(self) -> Callable[[Mapping[str, Any]], Any]:
        """The value this capture takes from an event's fields (first/last captures)."""
        if self.field is not None:
            return operator.itemgetter(self.field)
        return self.expr.function  # type: ignore[union-attr]

    def on_open(self) -> Callable[[Mapping[str, Any]], Any]:
        """The slot's value when the capturing event opens the trial (an exists window always holds at its own start)."""
        if self.mode != "exists":
            return self.reader()
        where = self.where
        if where is None:
            return lambda _fields: True
        check = where.function
        return lambda fields: True if check(fields) is True else None

    def step(self) -> Step:
        """How a later event of the capturing kind changes the slot."""
        if self.mode == "last":
            read = self.reader()
            return lambda _value, _opened, _time, fields: read(fields)
        if self.mode == "first":
            read = self.reader()
            return lambda value, _opened, _time, fields: read(fields) if value is None else KEEP
        within = self.within
        check = self.where.function if self.where is not None else None

        def exists(value: Any, opened: int, time: int, fields: Mapping[str, Any]) -> Any:
            if value is True or (within is not None and not 0 <= time - opened <= within):
                return KEEP
            if check is not None and check(fields) is not True:
                return KEEP
            return True

        return exists


@dataclass(frozen=True)
class TrialLayout:
    """Compiled trial lifecycle and variable extraction; a trial's state is a tuple `(opened, slots)`.

    `openers` and `observers` hold, per event kind, the folds compiled from the captures; they are rebuilt
    rather than pickled, so a layout travels to the recovery store as its declarative fields. When slots are
    exact, trials with equal slot values share one slots tuple (`profiles`): an open trial then holds no value of
    its own, and closed trials are counted by hashing a few shared tuples.
    """

    slot_names: tuple[str, ...]
    captures: dict[str, tuple[Capture, ...]]
    derived: tuple[tuple[str, Expression], ...]
    defaults: dict[str, Any]
    opens_on: frozenset[str] | None
    close_on: frozenset[str]
    close_after: int | None
    slot_types: tuple[str, ...] = ()
    """The expression type (number, string, bool) of each slot; empty when unknown."""
    exact_kinds: frozenset[str] = frozenset()
    """Event kinds whose captures read no float field: their inputs repeat (categories, scores) and hold no NaN, which
    equals nothing, so with exact slots the slots an event makes are remembered by the values it reads."""
    openers: dict[str, Opener] = field(init=False, repr=False, compare=False)
    """Per opening kind; a kind absent here opens with `open_any` (or not at all when `opens_on` is set)."""
    open_any: Opener | None = field(init=False, repr=False, compare=False)
    observers: dict[str, Observer] = field(init=False, repr=False, compare=False)
    """Per capturing kind; events of other kinds leave an open trial as it is."""
    profiles: Profiles = field(init=False, repr=False, compare=False)
    """The shared slot tuples (empty unless slots are exact)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "profiles", {})
        profiles = self.profiles if self.exact_slots else None
        kinds = self.opens_on if self.opens_on is not None else self.captures.keys()
        openers = {kind: self._opener(self.captures.get(kind, ()), profiles, self._memoizes(kind)) for kind in kinds}
        observers = {kind: _observer(captures, profiles, self._memoizes(kind)) for kind, captures in self.captures.items()}
        object.__setattr__(self, "openers", openers)
        object.__setattr__(self, "open_any", self._opener((), profiles, profiles is not None) if self.opens_on is None else None)
        object.__setattr__(self, "observers", observers)

    def _memoizes(self, kind: str) -> bool:
        """Whether the folds of `kind` remember their slots by input: shared slots, and inputs that are never only equal."""
        return self.exact_slots and (kind in self.exact_kinds or kind not in self.captures)

    def __getstate__(self) -> dict[str, Any]:
        return {name: value for name, value in self.__dict__.items() if name not in _COMPILED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    @property
    def exact_slots(self) -> bool:
        """Whether equal slot values always mean equal variables: no numeric slot, where 1 == 1.0 and 0.0 == -0.0 print differently."""
        return len(self.slot_types) == len(self.slot_names) and "number" not in self.slot_types

    def open(self, event: Event) -> State | None:
        """The state of a trial that `event` opens, with the event already folded in; None when its kind opens no trial."""
        opener = self.openers.get(event.kind, self.open_any)
        return opener(event.time, event.fields) if opener is not None else None

    def observe(self, state: State, event: Event) -> State:
        """The trial after one more event: a new state when the event feeds a slot (states are immutable, so snapshots share them)."""
        observer = self.observers.get(event.kind)
        return observer(state, event.time, event.fields) if observer is not None else state

    def _opener(self, captures: tuple[Capture, ...], profiles: Profiles | None, memoize: bool) -> Opener:
        blank = [None] * len(self.slot_names)
        fills = tuple((capture.slot, capture.on_open()) for capture in captures)
        share = _sharer(profiles)

        def slots_of(fields: Mapping[str, Any]) -> tuple[Any, ...]:
            values = blank.copy()
            for slot, value in fills:
                values[slot] = value(fields)
            slots = tuple(values)
            return slots if share is None else share(slots)

        if not memoize:
            return lambda time, fields: (time, slots_of(fields))
        inputs = _input_reader(captures)
        memo: dict[Any, tuple[Any, ...]] = {}
        remembered = memo.get

        def open_trial(time: int, fields: Mapping[str, Any]) -> State:
            read = inputs(fields)
            slots = remembered(read)
            if slots is None:
                slots = slots_of(fields)
                if len(memo) < MEMO_LIMIT:
                    memo[read] = slots
            return (time, slots)

        return open_trial

    def variables(self, slots: tuple[Any, ...]) -> dict[str, Any]:
        """A closed trial's variables from its slots (`state[SLOTS]`): captured values, defaults for what never came, then derived expressions."""
        defaults = self.defaults
        values = {name: defaults.get(name) if value is None else value for name, value in zip(self.slot_names, slots)}
        for name, expr in self.derived:
            values[name] = expr.evaluate(values)
            if values[name] is None:
                values[name] = self.defaults.get(name)
        return values


_COMPILED = ("openers", "open_any", "observers", "profiles")
"""The layout's fields rebuilt from the others after unpickling."""


def _sharer(profiles: Profiles | None) -> Share | None:
    """The shared tuple equal to some slot values, added to the table when new and it has room; None without a table."""
    if profiles is None:
        return None
    shared = profiles.get

    def share(slots: tuple[Any, ...]) -> tuple[Any, ...]:
        found = shared(slots)
        if found is not None:
            return found
        if len(profiles) < PROFILE_LIMIT:
            profiles[slots] = slots
        return slots

    return share


def _input_reader(captures: tuple[Capture, ...]) -> Callable[[Mapping[str, Any]], Any]:
    """Fields -> the values the captures read, as a hashable key (declared fields are always present)."""
    names = sorted(frozenset().union(*(capture.inputs for capture in captures)))
    return operator.itemgetter(*names) if names else _nothing


def _nothing(_fields: Mapping[str, Any]) -> tuple[()]:
    return ()


def _observer(captures: tuple[Capture, ...], profiles: Profiles | None, memoize: bool) -> Observer:
    observe = _stepper(captures, profiles)
    if not memoize:
        return observe
    inputs = _input_reader(captures)
    windows = tuple(capture.within for capture in captures if capture.mode == "exists" and capture.within is not None)
    memo: dict[Any, tuple[Any, ...]] = {}
    remembered = memo.get

    def observe_remembered(state: State, time: int, fields: Mapping[str, Any]) -> State:
        """The slots after the event depend only on the slots before, the values read and which exists windows hold."""
        opened, slots = state
        elapsed = time - opened
        key = (slots, inputs(fields), *[0 <= elapsed <= within for within in windows]) if windows else (slots, inputs(fields))
        after = remembered(key)
        if after is None:
            after = observe(state, time, fields)[SLOTS]
            if len(memo) < MEMO_LIMIT:
                memo[key] = after
        return state if after is slots else (opened, after)

    return observe_remembered


def _stepper(captures: tuple[Capture, ...], profiles: Profiles | None) -> Observer:
    steps = tuple((capture.slot, capture.step()) for capture in captures)
    share = _sharer(profiles)

    def observe(state: State, time: int, fields: Mapping[str, Any]) -> State:
        slots = state[SLOTS]
        changed: list[Any] | None = None
        for index, step in steps:
            value = step(slots[index] if changed is None else changed[index], state[OPENED], time, fields)
            if value is not KEEP:
                if changed is None:
                    changed = list(slots)
                changed[index] = value
        if changed is None:
            return state
        slots = tuple(changed)
        return (state[OPENED], slots if share is None else share(slots))

    return observe
