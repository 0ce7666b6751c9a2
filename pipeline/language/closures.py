"""The closures compiled expressions are made of: each evaluates its operands per event and gives None when an input is
missing (three-valued logic for `and` and `or`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Fn = Callable[[Mapping[str, Any]], Any]


def as_number(fn: Fn) -> Fn:
    """The value as a number: a bool counts 1 or 0, so both branches of a conditional have one type."""

    def run(env: Mapping[str, Any]) -> Any:
        value = fn(env)
        return int(value) if isinstance(value, bool) else value

    return run


def binary(op: Callable[[Any, Any], Any], left: Fn, right: Fn) -> Fn:
    def run(env: Mapping[str, Any]) -> Any:
        a = left(env)
        if a is None:
            return None
        b = right(env)
        return None if b is None else op(a, b)

    return run


def chain(fns: list[Fn], ops: list[Callable[[Any, Any], bool]]) -> Fn:
    """`a < b < c`: pairwise comparisons left to right, each operand evaluated once, stopping at the first False."""
    first, pairs = fns[0], tuple(zip(ops, fns[1:]))

    def run(env: Mapping[str, Any]) -> bool | None:
        a = first(env)
        if a is None:
            return None
        for op, fn in pairs:
            b = fn(env)
            if b is None:
                return None
            if not op(a, b):
                return False
            a = b
        return True

    return run


def logic(fns: tuple[Fn, ...], decisive: bool) -> Fn:
    """Three-valued `and` (decisive False) or `or` (decisive True): any decisive operand decides, else a missing
    operand makes the result None."""

    def run(env: Mapping[str, Any]) -> bool | None:
        unknown = False
        for fn in fns:
            v = fn(env)
            if v is None:
                unknown = True
            elif v == decisive:
                return decisive
        return None if unknown else not decisive

    return run
