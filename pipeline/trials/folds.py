"""The per-event hot path of the trial buckets: folding a batch of events into open trials, and the folds that remember a
trial's profile by the values an event reads (pure).

Plain Python, and compiled by Cython at install where a C compiler is found (`setup.py`): the same code then runs as C,
without the interpreter's per-bytecode work, which is most of a bucket's cost per event. `COMPILED` tells which runs.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

PROFILE_BITS = 12
PROFILE_LIMIT = 1 << PROFILE_BITS
"""Most distinct slot tuples a layout numbers (a few dozen for group × prediction × label)."""
PROFILE_MASK = PROFILE_LIMIT - 1

MEMO_LIMIT = 4096
"""Most inputs an opener or observer remembers the resulting profile of (race × decile score: sixty)."""

COMPILED: bool = not __file__.endswith((".py", ".pyc"))
"""Whether this module runs compiled (an extension module) rather than interpreted."""


def fold(trials: MutableMapping[str, Any], events: list, layout: Any, closing_times: list, closing_keys: list, due: list) -> int:
    """Fold events `(key, time, kind, fields, origin)` (in order) into the open `trials` by the folds of `layout` (a
    `TrialLayout`); return how many opened none.

    A trial opens on the first event of its key whose kind has an opener (`open_any` for kinds without one; None: none),
    its close time and key appended to `closing_times` and `closing_keys` when trials close `close_after` after opening;
    events of a kind with an observer change it; an event of a `close_on` kind closes it, appended to `due` as
    `(time, key, state)`, as does one that meets the layout's closing condition (`close_checks`). An opener may give
    None: the event's condition (`opens_when`) does not hold, and it opens nothing. An event dated after its key's trial
    ended (`close_after` past its opening) does not join it: the trial goes to `due` at its own close time, and the
    event meets no open trial, however the events were batched.
    """
    rows = ((event[0], event[1], event[2], event[3], 0) for event in events)
    return _fold_rows(trials, rows, layout, lambda kind: _EventFolds(layout, kind), closing_times, closing_keys, due)


def fold_columns(trials: MutableMapping[str, Any], columns: Any, layout: Any, closing_times: list, closing_keys: list, due: list) -> int:
    """`fold` for the events of an `EventColumns` block, read from their structs: an input an opener or observer has
    remembered changes a trial without a dict of fields being made; the others, and closing conditions, are handed
    the line's fields."""
    kind_of: dict = columns.kind_of
    rows = zip(columns.keys, columns.times, [kind_of[typed.__class__] for typed in columns.structs], columns.structs, range(len(columns.keys)))
    return _fold_rows(trials, rows, layout, lambda kind: _ColumnFolds(layout, kind, columns), closing_times, closing_keys, due)


def _fold_rows(trials: MutableMapping[str, Any], rows: Any, layout: Any, folds_of: Callable[[str], Any], closing_times: list, closing_keys: list, due: list) -> int:
    """The fold of events given as `(key, time, kind, reading, row)`, how events of each kind meet a trial made by
    `folds_of` (`_EventFolds`, `_ColumnFolds`).

    The built-in annotations (`list`, `dict`, `frozenset`) let the compiled code call the C API directly; it rejects
    subclasses, which is why `trials` (a dict subclass for some layouts) is annotated abstractly.
    """
    kinds: dict = {}
    close_on: frozenset = layout.closing_kinds
    close_after = layout.close_after
    unmatched = 0
    for key, time, kind, reading, row in rows:
        folds = kinds.get(kind)
        if folds is None:
            folds = kinds[kind] = folds_of(kind)
        state = _current(trials, key, time, close_after, due)
        if state is None:
            state = folds.open(time, reading, row)
            if state is None:
                unmatched += 1
                continue
            if close_after is not None:
                closing_times.append(time + close_after)
                closing_keys.append(key)
        elif folds.observer is not None:
            state = folds.observe(state, time, reading, row)
        if kind in close_on and folds.closes(reading, row):
            trials.pop(key, None)
            due.append((time, key, state))
            continue
        trials[key] = state
    return unmatched


def _current(trials: MutableMapping[str, Any], key: str, time: int, close_after: int | None, due: list) -> Any:
    """The open trial of `key` an event at `time` meets, or None: a trial that ended before (`close_after` past its
    opening) goes to `due` at its end."""
    state = trials.get(key)
    if state is not None and close_after is not None:
        ends = (state >> PROFILE_BITS if state.__class__ is int else state[0]) + close_after
        if time > ends:
            del trials[key]
            due.append((ends, key, state))
            return None
    return state


class _EventFolds:
    """How events of one kind, their fields a dict, meet a trial: the layout's opener, observer and closing condition."""

    __slots__ = ("opener", "observer", "check")

    def __init__(self, layout: Any, kind: str):
        self.opener = layout.openers.get(kind, layout.open_any)
        self.observer = layout.observers.get(kind)
        self.check = layout.close_checks.get(kind)

    def open(self, time: int, fields: Any, _row: int) -> Any:
        return None if self.opener is None else self.opener(time, fields)

    def observe(self, state: Any, time: int, fields: Any, _row: int) -> Any:
        return self.observer(state, time, fields)

    def closes(self, fields: Any, _row: int) -> bool:
        return self.check is None or self.check(fields)


class _ColumnFolds:
    """How events of one kind read from decoded structs meet a trial: the layout's opener and observer, their memos
    read from the struct (see `EventColumns.reader`), the line's fields made only for what the memos do not know."""

    __slots__ = ("opener", "observer", "check", "columns", "open_read", "open_profiles", "observe_read", "observe_profiles", "windows")

    def __init__(self, layout: Any, kind: str, columns: Any):
        self.opener = layout.openers.get(kind, layout.open_any)
        open_memo = layout.open_memos.get(kind) if kind in layout.openers else layout.open_any_memo
        self.observer = layout.observers.get(kind)
        observe_memo = layout.observe_memos.get(kind)
        self.check = layout.close_checks.get(kind)
        self.columns = columns
        self.open_read = None if open_memo is None else columns.reader(kind, open_memo.names)
        self.open_profiles = None if open_memo is None else open_memo.profiles
        self.observe_read = None if observe_memo is None else columns.reader(kind, observe_memo.names)
        self.observe_profiles = None if observe_memo is None else observe_memo.profiles
        self.windows = () if observe_memo is None else observe_memo.windows

    def open(self, time: int, typed: Any, row: int) -> Any:
        if self.opener is None:
            return None
        if self.open_read is not None:
            number = self.open_profiles.get(self.open_read(typed))
            if number is not None:
                return time << PROFILE_BITS | number
        return self.opener(time, self.columns.fields(row))

    def observe(self, state: Any, time: int, typed: Any, row: int) -> Any:
        if self.observe_read is not None and state.__class__ is int:
            number = state & PROFILE_MASK
            if self.windows:
                elapsed = time - (state >> PROFILE_BITS)
                remembered = self.observe_profiles.get((number, self.observe_read(typed), *[0 <= elapsed <= within for within in self.windows]))
            else:
                remembered = self.observe_profiles.get((number, self.observe_read(typed)))
            if remembered is not None:
                return state if remembered == number else state - number + remembered
        return self.observer(state, time, self.columns.fields(row))

    def closes(self, _typed: Any, row: int) -> bool:
        return self.check is None or self.check(self.columns.fields(row))


class FoldMemo:
    """What a remembering opener or observer of one kind reads, and the profiles it has remembered: `names`, the event
    fields it reads; `windows`, the exists windows whose holding at the event's time it also depends on; `profiles`,
    the remembered profile numbers. The native trial table looks these up itself instead of calling the fold."""

    __slots__ = ("names", "windows", "profiles", "read")

    def __init__(self, names: tuple, windows: tuple = ()):
        self.names = names
        self.windows = windows
        self.profiles: dict = {}
        self.read: Callable[[Mapping[str, Any]], Any] = operator.itemgetter(*names) if names else _nothing


def _nothing(_fields: Mapping[str, Any]) -> tuple[()]:
    return ()


def remembering_opener(memo: FoldMemo, open_new: Callable[[int, Mapping[str, Any]], Any]) -> Callable[[int, Mapping[str, Any]], Any]:
    """An opener of packed states that remembers, in `memo`, the profile number each distinct input (the values of
    `memo.names`) made, calling `open_new` only for inputs not seen yet."""
    remembered: dict = memo.profiles
    read_inputs = memo.read

    def open_trial(time: int, fields: Mapping[str, Any]) -> Any:
        read = read_inputs(fields)
        number = remembered.get(read)
        if number is not None:
            return time << PROFILE_BITS | number
        state = open_new(time, fields)
        if state.__class__ is int and len(remembered) < MEMO_LIMIT:
            remembered[read] = state & PROFILE_MASK
        return state

    return open_trial


def remembering_observer(memo: FoldMemo, observe_new: Callable[[Any, int, Mapping[str, Any]], Any]) -> Callable[[Any, int, Mapping[str, Any]], Any]:
    """An observer of packed states that remembers, in `memo`, the profile after an event by the profile before, the
    event's input and which of `memo.windows` hold at its time; `observe_new` works out the ones not seen yet."""
    remembered: dict = memo.profiles
    read_inputs = memo.read
    windows = memo.windows

    def observe(state: Any, time: int, fields: Mapping[str, Any]) -> Any:
        if state.__class__ is not int:
            return observe_new(state, time, fields)
        number = state & PROFILE_MASK
        if windows:
            elapsed = time - (state >> PROFILE_BITS)
            key = (number, read_inputs(fields), *[0 <= elapsed <= within for within in windows])
        else:
            key = (number, read_inputs(fields))
        after = remembered.get(key)
        if after is None:
            observed = observe_new(state, time, fields)
            if observed.__class__ is not int:
                return observed
            after = observed & PROFILE_MASK
            if len(remembered) < MEMO_LIMIT:
                remembered[key] = after
        return state if after == number else state - number + after

    return observe
