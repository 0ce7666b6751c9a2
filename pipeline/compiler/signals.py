"""The `windows:` and `triggers:` sections checked and compiled: each window's kind, field, group field and filter
against the input's declared fields; each trigger's condition against the values the monitor computes, an unknown
window, value or group named by its place (pure)."""

from __future__ import annotations

from fairstream.compiler.checks import Checker, known_kind
from fairstream.language.expressions import ExprType
from fairstream.language.models import Spec
from fairstream.monitoring.triggers import CLOSED_TRIALS, GROUP_TABLES, OPEN_TRIALS, TriggerPlan
from fairstream.trials.outcomes import PART_NAMES
from fairstream.trials.panes import WindowPlan

_NUMBERS = ("int", "float")


def compile_windows(check: Checker, spec: Spec, field_types: dict[str, dict[str, ExprType]]) -> tuple[WindowPlan, ...]:
    """Each window of the spec, its references checked (issues collected in `check`)."""
    plans = []
    for name, window in spec.windows.items():
        path = f"windows -> {name}"
        kind, field = window.kind, window.field
        if not known_kind(check, f"{path} -> {window.aggregate}", kind, spec.input.kinds):
            continue
        declared = spec.input.kinds[kind]
        if field is None and window.aggregate != "count":
            check.fail(f"{path} -> {window.aggregate}", f"a {window.aggregate} needs a numeric field: write {kind}.<field>; fields of {kind}: {', '.join(declared)}")
            continue
        if field is not None and field not in declared:
            check.fail(f"{path} -> {window.aggregate}", f"unknown field {field!r} of {kind}; its fields: {', '.join(declared)}")
            continue
        if field is not None and window.aggregate != "count" and declared[field] not in _NUMBERS:
            check.fail(f"{path} -> {window.aggregate}", f"{kind}.{field} is a {declared[field]} field; a {window.aggregate} needs an int or float field")
            continue
        if window.by is not None and window.by not in declared:
            check.fail(f"{path} -> by", f"unknown field {window.by!r} of {kind}; its fields: {', '.join(declared)}")
            continue
        where = None if window.where is None else check.expression(f"{path} -> where", window.where, field_types[kind], "bool")
        if window.where is not None and where is None:
            continue
        plans.append(WindowPlan(name, kind, field, window.aggregate, window.over, window.by, where))
    return tuple(plans)


def trigger_types(spec: Spec, windows: tuple[WindowPlan, ...]) -> dict[str, ExprType]:
    """The names a trigger's condition may read, with their types."""
    types: dict[str, ExprType] = {CLOSED_TRIALS: "number", OPEN_TRIALS: "number"}
    for part in PART_NAMES[spec.metric.type]:
        types.update({f"{part}.gap": "number", f"{part}.ratio": "number", f"{part}.status": "string"})
        types.update({f"{part}.{table}": "table" for table in GROUP_TABLES})
    types.update({plan.name: "table" if plan.by is not None else "number" for plan in windows})
    return types


def compile_triggers(check: Checker, spec: Spec, windows: tuple[WindowPlan, ...]) -> tuple[TriggerPlan, ...]:
    """Each trigger of the spec, its condition type-checked and every group it names checked where the groups are known."""
    types = trigger_types(spec, windows)
    known = _known_groups(spec, windows)
    plans = []
    for index, trigger in enumerate(spec.triggers):
        path = f"triggers -> {index} -> when"
        if trigger.name in spec.windows:
            check.fail(f"triggers -> {index} -> name", f"{trigger.name!r} names a window too; give the trigger a name of its own")
        condition = check.expression(path, trigger.when, types, "bool")
        if condition is None:
            continue
        unknown = [(name, group) for name, group in condition.reads if group is not None and name in known and group not in known[name]]
        if unknown:
            name, group = unknown[0]
            check.fail(path, f"unknown group {group!r} in {name}; its groups: {', '.join(sorted(known[name]))}")
            continue
        plans.append(TriggerPlan(trigger.name, condition, trigger.message))
    return tuple(plans)


def _known_groups(spec: Spec, windows: tuple[WindowPlan, ...]) -> dict[str, frozenset[str]]:
    """The tables whose groups the spec lists (`metric.groups`): each part's, and a window's whose `by` is the field the
    metric's group variable reads."""
    listed = spec.metric.groups
    if not isinstance(listed, list) or not isinstance(spec.metric.group, str):
        return {}
    groups = frozenset(listed)
    known = {f"{part}.{table}": groups for part in PART_NAMES[spec.metric.type] for table in GROUP_TABLES if spec.metric.compare != "overall"}
    source = spec.variables[spec.metric.group] if spec.metric.group in spec.variables else None
    for plan in windows:
        if source is not None and plan.by is not None and source.field == plan.by and source.first == plan.kind:
            known[plan.name] = groups
    return known

