"""How a trial's events become its variables: per event kind, which slots it fills and how (pure, no I/O)."""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fairstream.language.expressions import Expression
from fairstream.records.events import Event
from fairstream.trials.folds import PROFILE_BITS, PROFILE_LIMIT, PROFILE_MASK, FoldMemo, remembering_observer, remembering_opener

OPENED, SLOTS = 0, 1
"""Positions in a trial's state tuple `(opened, slots)`: open time and the tuple of variable slots (it closes at `opened + close_after`)."""

State = tuple[int, tuple[Any, ...]] | int
"""A trial: `(opened, slots)`, or with exact slots one int, `opened << PROFILE_BITS | number of the slots' profile`."""
Opener = Callable[[int, Mapping[str, Any]], State]
"""(event time, fields) -> the state of the trial the event opens."""
Observer = Callable[[State, int, Mapping[str, Any]], State]
"""(state, event time, fields) -> the state after the event; the same object when nothing changed."""
Step = Callable[[Any, int, int, Mapping[str, Any]], Any]
"""(slot value, trial open time, event time, fields) -> the slot's new value, or `KEEP`."""


KEEP = object()
"""What a capture step returns when the event leaves its slot as it was."""


class Profiles:
    """The distinct slot tuples of a layout's trials, numbered in order of first appearance; numbers never change, so
    a trial with exact slots is stored as one int (open time and profile number): no tuple of its own for the garbage
    collector to track, and a third of the memory. Worker threads of one process share a layout, so numbering a new
    tuple holds a lock."""

    def __init__(self, table: list[tuple[Any, ...]] | None = None):
        self.table: list[tuple[Any, ...]] = table if table is not None else []
        self.numbers = {slots: number for number, slots in enumerate(self.table)}
        self._numbering = threading.Lock()

    def number(self, slots: tuple[Any, ...]) -> int | None:
        """The profile number of these slot values, numbering them when new; None once the table is full."""
        number = self.numbers.get(slots)
        if number is None:
            with self._numbering:
                number = self.numbers.get(slots)
                if number is None and len(self.table) < PROFILE_LIMIT:
                    self.table.append(slots)
                    number = self.numbers[slots] = len(self.table) - 1
        return number

    def pack(self, opened: int, slots: tuple[Any, ...]) -> State:
        """The state of a trial: one int, or `(opened, slots)` once the table is full."""
        number = self.number(slots)
        return (opened, slots) if number is None else opened << PROFILE_BITS | number

    def unpack(self, state: State) -> tuple[int, tuple[Any, ...]]:
        """`(opened, slots)` of a state that `pack` made."""
        if state.__class__ is int:
            return state >> PROFILE_BITS, self.table[state & PROFILE_MASK]  # type: ignore[operator]
        return state  # type: ignore[return-value]

    def slots_of_all(self, states: list[State]) -> list[tuple[Any, ...]]:
        """The slots of many trials in one pass (a tick's closed trials)."""
        table = self.table
        if len(table) < PROFILE_LIMIT:  # states are tuples only once the table is full
            return list(map(table.__getitem__, map(PROFILE_MASK.__and__, states)))  # type: ignore[arg-type]
        return [table[state & PROFILE_MASK] if state.__class__ is int else state[SLOTS] for state in states]  # type: ignore[operator, index]

    def __reduce__(self) -> tuple[Any, ...]:
        return (Profiles, (self.table,))


@dataclass(frozen=True)
class Capture:
    """One event kind feeding one variable slot: first/last value (field or expression), existence, or a count, sum,
    max or min over the kind's events (those `within` the trial's start and satisfying `where`)."""

    slot: int
    mode: Literal["first", "last", "exists", "count", "sum", "max", "min"]
    field: str | None = None
    expr: Expression | None = None
    within: int | None = None
    where: Expression | None = None
    elapsed: int | None = None
    """First/last: instead of a field, the event's time since the trial opened, in units of this many milliseconds."""
    optional: bool = False
    """First/last of a field: one that records may leave out (absent, null or empty reads as no value)."""

    @property
    def inputs(self) -> frozenset[str]:
        """The event fields this capture reads."""
        if self.elapsed is not None:
            return frozenset()
        read = frozenset((self.field,)) if self.field is not None else self.expr.names if self.expr is not None else frozenset()
        return read | (self.where.names if self.where is not None else frozenset())

    def reader(self) -> Callable[[Mapping[str, Any]], Any]:
        """The value this capture takes from an event's fields (first/last captures)."""
        if self.field is not None and self.optional:
            name = self.field
            return lambda fields: fields.get(name) or None
        if self.field is not None:
            return operator.itemgetter(self.field)
        return self.expr.function  # type: ignore[union-attr]

    def on_open(self) -> Callable[[Mapping[str, Any]], Any]:
        """The slot's value when the capturing event opens the trial (an exists window always holds at its own start)."""
        if self.elapsed is not None:
            return lambda _fields: 0.0
        if self.mode in ("first", "last"):
            return self.reader()
        check = self.where.function if self.where is not None else (lambda _fields: True)
        if self.mode == "exists":
            return lambda fields: True if check(fields) is True else None
        if self.mode == "count":
            return lambda fields: 1 if check(fields) is True else 0
        read = self.reader()
        return lambda fields: read(fields) if check(fields) is True else None

    def step(self) -> Step:
        """How a later event of the capturing kind changes the slot."""
        if self.elapsed is not None:
            unit = self.elapsed
            if self.mode == "last":
                return lambda _value, opened, time, _fields: (time - opened) / unit
            return lambda value, opened, time, _fields: (time - opened) / unit if value is None else KEEP
        if self.mode == "last":
            read = self.reader()
            return lambda _value, _opened, _time, fields: read(fields)
        if self.mode == "first":
            read = self.reader()
            return lambda value, _opened, _time, fields: read(fields) if value is None else KEEP
        within = self.within
        check = self.where.function if self.where is not None else None
        combine = _COMBINE[self.mode]
        read = self.reader() if self.mode in ("sum", "max", "min") else None

        def folded(value: Any, opened: int, time: int, fields: Mapping[str, Any]) -> Any:
            if value is True or (within is not None and not 0 <= time - opened <= within):
                return KEEP
            if check is not None and check(fields) is not True:
                return KEEP
            return combine(value, None if read is None else read(fields))

        return folded


def _larger(value: Any, new: Any) -> Any:
    return KEEP if new is None or (value is not None and value >= new) else new


def _smaller(value: Any, new: Any) -> Any:
    return KEEP if new is None or (value is not None and value <= new) else new


_COMBINE: dict[str, Callable[[Any, Any], Any]] = {
    "exists": lambda _value, _new: True,
    "count": lambda value, _new: (value or 0) + 1,
    "sum": lambda value, new: KEEP if new is None else (value or 0) + new,
    "max": _larger,
    "min": _smaller,
}
"""How a folding capture combines its slot with an accepted event's value (exists: whether any came)."""


@dataclass(frozen=True)
class TrialLayout:
    """Compiled trial lifecycle and variable extraction; a trial's state is `(opened, slots)`, or one int (see below).

    `openers` and `observers` hold, per event kind, the folds compiled from the captures; they are rebuilt
    rather than pickled, so a layout travels to the recovery store as its declarative fields and its profile
    table. When slots are exact, a trial is one int naming its slot values in `profiles` (see `Profiles`), and
    closed trials are counted by hashing a few shared tuples.
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
    open_memos: dict[str, FoldMemo] = field(init=False, repr=False, compare=False)
    """Per opening kind whose opener remembers the profiles it made: its memo (see `FoldMemo`)."""
    open_any: Opener | None = field(init=False, repr=False, compare=False)
    open_any_memo: FoldMemo | None = field(init=False, repr=False, compare=False)
    observers: dict[str, Observer] = field(init=False, repr=False, compare=False)
    """Per capturing kind; events of other kinds leave an open trial as it is."""
    observe_memos: dict[str, FoldMemo] = field(init=False, repr=False, compare=False)
    """Per capturing kind whose observer remembers the profiles it made: its memo."""
    profiles: Profiles | None = field(default=None, repr=False, compare=False)
    """The numbered slot tuples of trials with exact slots (None otherwise); pickled with the layout, as states refer to it."""
    open_when: Expression | None = None
    """Only an event satisfying this (over its fields and `kind`) opens a trial: the openers give None for others."""
    close_when: Expression | None = None
    """An event satisfying this closes its trial (`close_checks`), whatever its kind."""
    kinds: frozenset[str] = frozenset()
    """Every event kind of the input (the kinds a condition may open or close on)."""
    close_checks: dict[str, Callable[[Mapping[str, Any]], bool]] = field(init=False, repr=False, compare=False)
    """Per kind in `close_on` that closes only on a condition: whether an event's fields meet it."""

    def __post_init__(self) -> None:
        if self.profiles is None and self.exact_slots:
            object.__setattr__(self, "profiles", Profiles())
        profiles = self.profiles
        conditional = self.open_when is not None
        kinds = self.opens_on if self.opens_on is not None else self.kinds if conditional else self.captures.keys()
        opening = {kind: self._opener(self.captures.get(kind, ()), profiles, self._memoizes(kind)) for kind in kinds}
        openers = {kind: opener for kind, (opener, _) in opening.items()}
        if conditional:
            openers = {kind: _opening_when(self.open_when, kind, opener) for kind, opener in openers.items()}  # type: ignore[arg-type]
        observing = {kind: _observer(captures, profiles, self._memoizes(kind)) for kind, captures in self.captures.items()}
        object.__setattr__(self, "openers", openers)
        object.__setattr__(self, "open_memos", {} if conditional else {kind: memo for kind, (_, memo) in opening.items() if memo is not None})
        any_kind = self.opens_on is None and not conditional
        open_any, open_any_memo = self._opener((), profiles, profiles is not None) if any_kind else (None, None)
        object.__setattr__(self, "open_any", open_any)
        object.__setattr__(self, "open_any_memo", open_any_memo)
        object.__setattr__(self, "observers", {kind: observer for kind, (observer, _) in observing.items()})
        object.__setattr__(self, "observe_memos", {kind: memo for kind, (_, memo) in observing.items() if memo is not None})
        checks = {} if self.close_when is None else {kind: _holds(self.close_when, kind) for kind in self.kinds - self.close_on}
        object.__setattr__(self, "close_checks", checks)

    @property
    def closing_kinds(self) -> frozenset[str]:
        """Kinds whose events may close a trial: those of `close_on`, and every kind when a condition closes trials."""
        return self.close_on | frozenset(self.close_checks)

    def _memoizes(self, kind: str) -> bool:
        """Whether the folds of `kind` remember their profile by input: numbered profiles, and inputs that repeat (`exact_kinds`)."""
        return self.exact_slots and (kind in self.exact_kinds or kind not in self.captures)

    def __getstate__(self) -> dict[str, Any]:
        return {name: value for name, value in self.__dict__.items() if name not in _COMPILED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    @property
    def exact_slots(self) -> bool:
        """Whether equal slot values always mean equal variables and can be remembered: no numeric slot, where 1 == 1.0 and
        0.0 == -0.0 print differently, and no probabilities, an object each and rarely twice alike."""
        return len(self.slot_types) == len(self.slot_names) and not {"number", "probabilities"} & set(self.slot_types)

    def opened(self, state: State) -> int:
        """When the trial opened."""
        return (state if self.profiles is None else self.profiles.unpack(state))[OPENED]  # type: ignore[index]

    def earliest_opened(self, states: Iterable[State]) -> int | None:
        """The earliest opening time among trial states, in one pass in C where they are all ints (opened in the high
        bits) or all tuples; None without states."""
        if self.profiles is None:
            return min(map(operator.itemgetter(OPENED), states), default=None)
        if len(self.profiles.table) < PROFILE_LIMIT:  # states are ints until the table is full
            low = min(states, default=None)
            return None if low is None else low >> PROFILE_BITS  # type: ignore[operator]
        return min(map(self.opened, states), default=None)

    def opened_of_all(self, states: list[State]) -> list[int]:
        """When each of many trials opened, in one pass (a tick's closed trials)."""
        if self.profiles is None:
            return list(map(operator.itemgetter(OPENED), states))
        if len(self.profiles.table) < PROFILE_LIMIT:  # states are ints, opened in the high bits
            return list(map(PROFILE_BITS.__rrshift__, states))  # type: ignore[arg-type]
        return [state >> PROFILE_BITS if state.__class__ is int else state[OPENED] for state in states]  # type: ignore[operator, index]

    def slots_of_all(self, states: list[State]) -> list[tuple[Any, ...]]:
        """The slots of many trials in one pass."""
        return self.profiles.slots_of_all(states) if self.profiles is not None else list(map(operator.itemgetter(SLOTS), states))

    def slots(self, state: State) -> tuple[Any, ...]:
        """The trial's slot values."""
        return (state if self.profiles is None else self.profiles.unpack(state))[SLOTS]  # type: ignore[index]

    def open(self, event: Event) -> State | None:
        """The state of a trial that `event` opens, with the event already folded in; None when its kind opens no trial."""
        opener = self.openers.get(event.kind, self.open_any)
        return opener(event.time, event.fields) if opener is not None else None

    def observe(self, state: State, event: Event) -> State:
        """The trial after one more event: a new state when the event feeds a slot (states are immutable, so snapshots share them)."""
        observer = self.observers.get(event.kind)
        return observer(state, event.time, event.fields) if observer is not None else state

    def _opener(self, captures: tuple[Capture, ...], profiles: Profiles | None, memoize: bool) -> tuple[Opener, FoldMemo | None]:
        """The opener of a kind with these captures, and the memo it keeps of the profiles it made (None: it keeps none)."""
        blank = [None] * len(self.slot_names)
        fills = tuple((capture.slot, capture.on_open()) for capture in captures)

        def slots_of(fields: Mapping[str, Any]) -> tuple[Any, ...]:
            values = blank.copy()
            for slot, value in fills:
                values[slot] = value(fields)
            return tuple(values)

        if profiles is None:
            return (lambda time, fields: (time, slots_of(fields))), None
        pack = profiles.pack

        def open_packed(time: int, fields: Mapping[str, Any]) -> State:
            return pack(time, slots_of(fields))

        if not memoize:
            return open_packed, None
        memo = FoldMemo(_input_names(captures))
        return remembering_opener(memo, open_packed), memo

    def variables(self, slots: tuple[Any, ...]) -> dict[str, Any]:
        """A closed trial's variables from its slots (`slots(state)`): captured values, defaults for what never came, then derived expressions."""
        defaults = self.defaults
        values = {name: defaults.get(name) if value is None else value for name, value in zip(self.slot_names, slots)}
        for name, expr in self.derived:
            values[name] = expr.evaluate(values)
            if values[name] is None:
                values[name] = self.defaults.get(name)
        return values


_COMPILED = ("openers", "open_memos", "open_any", "open_any_memo", "observers", "observe_memos", "close_checks")
"""The layout's fields rebuilt from the others after unpickling."""


class _WithKind:
    """An event's fields with its kind under the name `kind`, as trial conditions read them."""

    __slots__ = ("fields", "kind")

    def __init__(self, fields: Mapping[str, Any], kind: str):
        self.fields, self.kind = fields, kind

    def get(self, name: str) -> Any:
        return self.kind if name == "kind" else self.fields.get(name)


def _holds(condition: Expression, kind: str) -> Callable[[Mapping[str, Any]], bool]:
    """Whether an event of `kind` with these fields satisfies the condition (undefined counts as not)."""
    check = condition.function
    return lambda fields: check(_WithKind(fields, kind)) is True


def _opening_when(condition: Expression, kind: str, opener: Opener) -> Opener:
    """The opener of `kind` that opens only when the condition holds (None otherwise: the event opens no trial)."""
    holds = _holds(condition, kind)
    return lambda time, fields: opener(time, fields) if holds(fields) else None  # type: ignore[return-value]


def _input_names(captures: tuple[Capture, ...]) -> tuple[str, ...]:
    """The event fields the captures read, in a fixed order (declared fields are always present)."""
    return tuple(sorted(frozenset().union(*(capture.inputs for capture in captures))))


def _observer(captures: tuple[Capture, ...], profiles: Profiles | None, memoize: bool) -> tuple[Observer, FoldMemo | None]:
    """The observer of a kind with these captures, and the memo it keeps of the profiles it made (None: it keeps none)."""
    step = _stepper(captures)
    if profiles is None:

        def observe(state: State, time: int, fields: Mapping[str, Any]) -> State:
            opened, slots = state  # type: ignore[misc]
            after = step(slots, opened, time, fields)
            return state if after is slots else (opened, after)

        return observe, None
    unpack, pack = profiles.unpack, profiles.pack

    def observe_packed(state: State, time: int, fields: Mapping[str, Any]) -> State:
        opened, slots = unpack(state)
        after = step(slots, opened, time, fields)
        return state if after is slots else pack(opened, after)

    if not memoize:
        return observe_packed, None
    memo = FoldMemo(_input_names(captures), tuple(capture.within for capture in captures if capture.within is not None))
    return remembering_observer(memo, observe_packed), memo


def _stepper(captures: tuple[Capture, ...]) -> Callable[[tuple[Any, ...], int, int, Mapping[str, Any]], tuple[Any, ...]]:
    """(slots, open time, event time, fields) -> the slots after the event; the same tuple when nothing changed."""
    steps = tuple((capture.slot, capture.step()) for capture in captures)

    def step_slots(slots: tuple[Any, ...], opened: int, time: int, fields: Mapping[str, Any]) -> tuple[Any, ...]:
        changed: list[Any] | None = None
        for index, step in steps:
            value = step(slots[index] if changed is None else changed[index], opened, time, fields)
            if value is not KEEP:
                if changed is None:
                    changed = list(slots)
                changed[index] = value
        return slots if changed is None else tuple(changed)

    return step_slots
