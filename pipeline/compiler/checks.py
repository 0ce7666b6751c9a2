"""The pieces `build_plan` compiles a spec from: each problem collected with its field path, expressions type-checked
against the fields and variables in scope, captures of event fields, derived variables in dependency order, prior
expressions, constraint rules, the parts a metric declares and the fields that define groups (pure)."""

from __future__ import annotations

import ast
import re
from typing import Any

from fairstream.language.estimator import Estimator
from fairstream.language.expressions import Expression, ExprType, compile_expression
from fairstream.language.metric import Baseline, Constraint, Metric
from fairstream.language.models import Spec
from fairstream.language.stream import Variable
from fairstream.records.errors import ExpressionError
from fairstream.trials.layout import Capture
from fairstream.trials.outcomes import PART_NAMES
from fairstream.verdicts.constraints import ConstraintRule


class Checker:
    """Collects (path, message) issues while compiling."""

    def __init__(self) -> None:
        self.issues: list[tuple[str, str]] = []

    def fail(self, path: str, message: str) -> None:
        self.issues.append((path, message))

    def expression(self, path: str, source: str, types: dict[str, ExprType], want: ExprType | None = None) -> Expression | None:
        try:
            expr = compile_expression(source, types)
        except ExpressionError as err:
            self.fail(path, str(err))
            return None
        if want is not None and expr.type != want:
            self.fail(path, f"must be a {want} expression; {source!r} is a {expr.type} expression")
            return None
        return expr


def known_kind(check: Checker, path: str, kind: str, kinds: dict[str, Any]) -> bool:
    """Whether `kind` is an event kind of the input; an issue at `path` where it is not."""
    if kind not in kinds:
        check.fail(path, f"unknown event kind {kind!r}; known kinds: {', '.join(sorted(kinds))}")
        return False
    return True


def expression_names(source: str) -> set[str]:
    """Names an expression refers to (for ordering derived variables); empty when it does not parse."""
    try:
        return {node.id for node in ast.walk(ast.parse(source, mode="eval")) if isinstance(node, ast.Name)}
    except SyntaxError:
        return set()


def condition_expression(check: Checker, path: str, source: str, field_types: dict[str, dict[str, ExprType]]) -> Expression | None:
    """A trial's opening or closing condition: a bool expression over an event's fields, of whichever kind, and `kind`."""
    types: dict[str, ExprType] = {}
    clashing: set[str] = set()
    for fields in field_types.values():
        for name, type_ in fields.items():
            if types.setdefault(name, type_) != type_:
                clashing.add(name)
    types["kind"] = "string"
    condition = check.expression(path, source, types, "bool")
    if condition is not None and condition.names & clashing:
        name = sorted(condition.names & clashing)[0]
        kinds = ", ".join(f"{kind}: {fields[name]}" for kind, fields in field_types.items() if name in fields)
        check.fail(path, f"field {name!r} has different types in different kinds ({kinds}); a condition needs one")
        return None
    return condition


def fold_capture(check: Checker, path: str, slot: int, variable: Variable, kind: str, fields: dict[str, ExprType]) -> Capture | None:
    """The capture of a count, sum, max or min variable: the value it reads per event, checked against the kind's fields."""
    mode = variable.fold[0]  # type: ignore[index]
    where = check.expression(f"{path} -> where", variable.where, fields, "bool") if variable.where else None
    if mode == "count":
        return Capture(slot, "count", within=variable.within, where=where)
    field_name = variable.folded_field
    if field_name is not None:
        if not field_declared(check, f"{path} -> {'field' if variable.field else mode}", kind, fields, field_name):
            return None
        value_type = fields[field_name]
        capture = Capture(slot, mode, field=field_name, within=variable.within, where=where)  # type: ignore[arg-type]
    else:
        expr = check.expression(f"{path} -> expr", variable.expr, fields)  # type: ignore[arg-type]
        if expr is None:
            return None
        value_type = expr.type
        capture = Capture(slot, mode, expr=expr, within=variable.within, where=where)  # type: ignore[arg-type]
    if (mode == "sum" and value_type != "number") or value_type in ("bool", "probabilities"):
        check.fail(f"{path} -> {mode}", f"{mode} needs numbers{'' if mode == 'sum' else ' or strings'}; the value read is a {value_type}")
        return None
    return capture


def field_declared(check: Checker, path: str, kind: str, fields: dict[str, ExprType], name: str) -> bool:
    """Whether `kind` events declare field `name`; if not, the issue names the fields they do declare."""
    if name in fields:
        return True
    check.fail(path, f"{kind} events do not declare field {name!r}; declared: {', '.join(sorted(fields)) or 'none'}")
    return False


def capture_type(capture: Capture, fields: dict[str, ExprType]) -> ExprType:
    """The type of the value a field or expression capture reads."""
    return fields[capture.field] if capture.field is not None else capture.expr.type  # type: ignore[union-attr]


def derived_variables(
    check: Checker, sources: dict[str, Variable], types: dict[str, Any], defaults: dict[str, Any]
) -> tuple[tuple[str, Expression], ...]:
    """Compile expression-only variables in dependency order; report unknown names and cycles."""
    ordered: list[tuple[str, Expression]] = []
    remaining = dict(sources)
    while remaining:
        progressed = False
        for name, variable in list(remaining.items()):
            needs = expression_names(variable.expr or "")
            if needs & remaining.keys():
                continue
            expr = check.expression(f"variables -> {name} -> expr", variable.expr, types)
            del remaining[name]
            progressed = True
            if expr is not None:
                ordered.append((name, expr))
                types[name] = expr.type
                if variable.default is not None:
                    defaults[name] = variable.default
        if not progressed:
            for name in remaining:
                check.fail(f"variables -> {name} -> expr", f"variables depend on each other in a cycle: {', '.join(remaining)}")
            break
    return tuple(ordered)


def prior_expression(check: Checker, path: str, source: str, types: dict[str, Any]) -> Expression | None:
    """A prior written as an expression; one over no aggregate is a constant, refused outside [0, 1] as the number is
    (an expression over aggregates is clamped to [0, 1] as it is evaluated)."""
    expr = check.expression(path, source, types, "number")
    if expr is not None and not expr.names:
        value = expr.evaluate({})
        if value is not None and not 0 <= value <= 1:
            check.fail(path, f"prior must be in [0, 1]; {source!r} is {value:g}")
            return None
    return expr


def group_fields(spec: Spec) -> tuple[str, ...]:
    """The input fields that define a person's group: those the metric's group and condition variables read (a field, or
    the fields an expression names), and the shield's group field. Dead letters redact them unless told otherwise."""
    declared = {name for fields in spec.input.kinds.values() for name in fields}
    found: list[str] = []
    groups = [spec.metric.group] if isinstance(spec.metric.group, str) else list(spec.metric.group)
    pending = [*groups, *([spec.metric.condition] if spec.metric.condition else [])]
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen or name not in spec.variables:
            continue
        seen.add(name)
        variable = spec.variables[name]
        if variable.field is not None:
            found.append(variable.field)
        if variable.bisg is not None:
            found += [variable.bisg.surname, variable.bisg.zip]
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", variable.expr or ""):
            if word in declared:
                found.append(word)
            elif word in spec.variables:
                pending.append(word)  # an expression over other variables
    if spec.shield is not None:
        found.append(spec.shield.group)
    return tuple(dict.fromkeys(found))


def declared_parts(metric: Metric) -> int | None:
    """The parts a metric judges against its threshold, where the metric fixes them (equalized odds: two); None where the
    data does (the strata of conditional statistical parity, each a part, whose standardized part is a point verdict)."""
    if metric.type == "conditional_statistical_parity":
        return None
    return len(PART_NAMES[metric.type])


def constraint_rule(constraint: Constraint, estimator: Estimator) -> ConstraintRule:
    """A spec's ELF constraint as the monitor judges it: τ fixed or after a baseline, the estimator's bounds by default."""
    baseline = constraint.tau.baseline if isinstance(constraint.tau, Baseline) else None
    return ConstraintRule(
        part=constraint.part,
        direction=constraint.direction,
        delta=constraint.delta,
        bound="betting" if estimator.verdict == "anytime" else constraint.bound or estimator.bounds,
        tau=None if baseline is not None else constraint.tau,  # type: ignore[arg-type]
        baseline=baseline,
        outcome_range=estimator.outcome_range,
    )
