"""Compile a validated `Spec` into the pure runtime pieces, checking every cross-reference (kinds, fields, variables, types)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from fairstream.language.estimator import Estimator
from fairstream.language.expressions import Expression, ExprType, compile_expression
from fairstream.language.metric import Baseline, Constraint, Metric, tests_ratio
from fairstream.language.models import Spec
from fairstream.language.stream import Variable
from fairstream.monitor import MonitorConfig
from fairstream.records.errors import ExpressionError, SpecError
from fairstream.records.parse import RecordParser
from fairstream.records.redact import LetterRecord
from fairstream.records.timefmt import format_duration, parse_duration
from fairstream.trials.layout import Capture, TrialLayout
from fairstream.trials.outcomes import PART_NAMES, AggregateRule, MetricCells, Outcomes, SlotOutcomes
from fairstream.verdicts.budget import declared_pairs
from fairstream.verdicts.constraints import ConstraintRule
from fairstream.verdicts.judge import VerdictRule

_FIELD_TYPES: dict[str, ExprType] = {"int": "number", "float": "number", "str": "string", "bool": "bool"}


@dataclass(frozen=True)
class Plan:
    """A spec ready to run: its models plus the compiled trial layout, outcome mapping and monitor settings."""

    spec: Spec
    layout: TrialLayout
    outcomes: Outcomes
    monitor: MonitorConfig

    def parser(self, *, strings: bool = False) -> RecordParser:
        return RecordParser(self.spec.input, strings=strings, letter_record=self.letter_record)

    def shares_trials(self, other: Plan) -> bool:
        """Whether `other` counts the same trials (input, trial, variables and tick agree), so one computation serves both."""
        mine, theirs = self.spec, other.spec
        return (mine.input, mine.trial, mine.variables, mine.evaluate.tick) == (theirs.input, theirs.trial, theirs.variables, theirs.evaluate.tick)

    @property
    def letter_record(self) -> LetterRecord:
        """What the spec's dead letters keep of a rejected record."""
        policy = self.spec.dead_letters
        redact = group_fields(self.spec) if policy.redact is None else tuple(policy.redact)
        return LetterRecord(keep=policy.record, max_chars=policy.max_chars, redact=redact)


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
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", variable.expr or ""):
            if word in declared:
                found.append(word)
            elif word in spec.variables:
                pending.append(word)  # an expression over other variables
    if spec.shield is not None:
        found.append(spec.shield.group)
    return tuple(dict.fromkeys(found))


class _Checker:
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


def _names(source: str) -> set[str]:
    """Names an expression refers to (for ordering derived variables); empty when it does not parse."""
    try:
        return {node.id for node in ast.walk(ast.parse(source, mode="eval")) if isinstance(node, ast.Name)}
    except SyntaxError:
        return set()


def _condition(check: _Checker, path: str, source: str, field_types: dict[str, dict[str, ExprType]]) -> Expression | None:
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


def _fold_capture(check: _Checker, path: str, slot: int, variable: Variable, kind: str, fields: dict[str, ExprType]) -> Capture | None:
    """The capture of a count, sum, max or min variable: the value it reads per event, checked against the kind's fields."""
    mode = variable.fold[0]  # type: ignore[index]
    where = check.expression(f"{path} -> where", variable.where, fields, "bool") if variable.where else None
    if mode == "count":
        return Capture(slot, "count", within=variable.within, where=where)
    field_name = variable.folded_field
    if field_name is not None:
        if not _declared(check, f"{path} -> {'field' if variable.field else mode}", kind, fields, field_name):
            return None
        value_type = fields[field_name]
        capture = Capture(slot, mode, field=field_name, within=variable.within, where=where)  # type: ignore[arg-type]
    else:
        expr = check.expression(f"{path} -> expr", variable.expr, fields)  # type: ignore[arg-type]
        if expr is None:
            return None
        value_type = expr.type
        capture = Capture(slot, mode, expr=expr, within=variable.within, where=where)  # type: ignore[arg-type]
    if (mode == "sum" and value_type != "number") or value_type == "bool":
        check.fail(f"{path} -> {mode}", f"{mode} needs numbers{'' if mode == 'sum' else ' or strings'}; the value read is a {value_type}")
        return None
    return capture


def _declared(check: _Checker, path: str, kind: str, fields: dict[str, ExprType], name: str) -> bool:
    """Whether `kind` events declare field `name`; if not, the issue names the fields they do declare."""
    if name in fields:
        return True
    check.fail(path, f"{kind} events do not declare field {name!r}; declared: {', '.join(sorted(fields)) or 'none'}")
    return False


def _capture_type(capture: Capture, fields: dict[str, ExprType]) -> ExprType:
    """The type of the value a field or expression capture reads."""
    return fields[capture.field] if capture.field is not None else capture.expr.type  # type: ignore[union-attr]


def build_plan(spec: Spec, source: str = "<spec>") -> Plan:
    """Check the spec's cross-references and compile it; raises `SpecError` with every issue found."""
    check = _Checker()
    kinds = spec.input.kinds
    field_types = {kind: {name: _FIELD_TYPES[t] for name, t in fields.items()} for kind, fields in kinds.items()}

    def known_kind(path: str, kind: str) -> bool:
        if kind not in kinds:
            check.fail(path, f"unknown event kind {kind!r}; known kinds: {', '.join(sorted(kinds))}")
            return False
        return True

    for label, listed in (("opens_on", spec.trial.opens_on), ("close_on", spec.trial.close_on)):
        for index, kind in enumerate(listed or ()):
            known_kind(f"trial -> {label} -> {index}", kind)
    open_when, close_when = (
        _condition(check, f"trial -> {label}", source, field_types) if source else None
        for label, source in (("opens_when", spec.trial.opens_when), ("closes_when", spec.trial.closes_when))
    )

    slot_names: list[str] = []
    captures: dict[str, list[Capture]] = {}
    variable_types: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    derived_sources: dict[str, Variable] = {}

    close_after = spec.trial.close_after
    for name, variable in spec.variables.items():
        path = f"variables -> {name}"
        fold = variable.fold
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
        form = "first" if variable.first else "last" if variable.last else "exists" if variable.exists else fold[0]  # type: ignore[index]
        if not known_kind(f"{path} -> {form}", kind):
            continue
        slot = len(slot_names)
        slot_names.append(name)
        fields = field_types[kind]
        if fold is not None:
            capture = _fold_capture(check, path, slot, variable, kind, fields)
            if capture is not None:
                captures.setdefault(kind, []).append(capture)
                variable_types[name] = "number" if fold[0] in ("count", "sum") else _capture_type(capture, fields)
                if fold[0] in ("count", "sum"):
                    defaults[name] = 0 if variable.default is None else variable.default
                elif variable.default is not None:
                    defaults[name] = variable.default
            continue
        if variable.exists is not None:
            where = check.expression(f"{path} -> where", variable.where, fields, "bool") if variable.where else None
            captures.setdefault(kind, []).append(Capture(slot, "exists", within=variable.within, where=where))
            variable_types[name] = "bool"
            defaults[name] = False if variable.default is None else variable.default
            continue
        mode = "first" if variable.first is not None else "last"
        if variable.elapsed is not None:
            captures.setdefault(kind, []).append(Capture(slot, mode, elapsed=parse_duration(f"1{variable.elapsed}")))
            variable_types[name] = "number"
        elif variable.field is not None:
            if not _declared(check, f"{path} -> field", kind, fields, variable.field):
                continue
            captures.setdefault(kind, []).append(Capture(slot, mode, field=variable.field))
            variable_types[name] = fields[variable.field]
        else:
            expr = check.expression(f"{path} -> expr", variable.expr, fields)
            if expr is None:
                continue
            captures.setdefault(kind, []).append(Capture(slot, mode, expr=expr))
            variable_types[name] = expr.type
        if variable.default is not None:
            defaults[name] = variable.default

    derived = _derived(check, derived_sources, variable_types, defaults)
    metric = spec.metric
    group_names = [metric.group] if isinstance(metric.group, str) else metric.group
    references = [(f"group -> {i}" if len(group_names) > 1 else "group", name) for i, name in enumerate(group_names)]
    references += [(role, getattr(metric, role)) for role in ("prediction", "label", "condition", "outcome", "supply", "demand")]
    for role, name in references:
        if name is None:
            continue
        if name not in spec.variables:
            check.fail(f"metric -> {role}", f"unknown variable {name!r}; variables: {', '.join(spec.variables)}")
        elif role in ("prediction", "label") and variable_types.get(name) not in ("bool", None):
            check.fail(f"metric -> {role}", f"must name a boolean variable; {name!r} is a {variable_types[name]}")
        elif role in ("outcome", "supply", "demand") and variable_types.get(name) not in ("number", None):
            check.fail(f"metric -> {role}", f"must name a numeric variable; {name!r} is a {variable_types[name]}")

    rules = []
    for name, aggregate in spec.aggregates.items():
        path = f"aggregates -> {name}"
        where = check.expression(f"{path} -> where", aggregate.where, variable_types, "bool") if aggregate.where else None
        if aggregate.sum is not None:
            if aggregate.sum not in spec.variables:
                check.fail(f"{path} -> sum", f"unknown variable {aggregate.sum!r}; variables: {', '.join(spec.variables)}")
            elif variable_types.get(aggregate.sum) not in ("number", None):
                check.fail(f"{path} -> sum", f"must name a numeric variable; {aggregate.sum!r} is a {variable_types[aggregate.sum]}")
        rules.append(AggregateRule(name, "sum" if aggregate.sum else "count", aggregate.sum, where))

    prior: float | Expression | None = spec.estimator.prior
    aggregate_types = {name: "number" for name in spec.aggregates}
    if isinstance(spec.estimator.prior, str):
        prior = _prior_expression(check, "estimator -> prior", spec.estimator.prior, aggregate_types)
    part_estimators: dict[str, tuple[float | Expression | None, float | None]] = {}
    for part, own in spec.estimator.parts.items():
        path = f"estimator -> parts -> {part}"
        known = PART_NAMES[metric.type]
        if part.split("[", 1)[0] not in known:
            check.fail(path, f"{metric.type} has no part {part!r}; its parts: {', '.join(known)}")
        own_prior = _prior_expression(check, f"{path} -> prior", own.prior, aggregate_types) if isinstance(own.prior, str) else own.prior
        part_estimators[part] = (own_prior, own.confidence)

    window, span = spec.window, spec.trial.close_after
    if window.kind == "sliding" and window.by == "opened" and span is not None and not spec.trial.close_on and spec.trial.closes_when is None:
        if window.length <= span:  # type: ignore[operator]
            check.fail(
                "window -> length",
                f"a sliding window of {format_duration(window.length)} by opened time never holds a trial that closes "  # type: ignore[arg-type]
                f"{format_duration(span)} after it opens; make it longer than trial.close_after",
            )
    every = spec.evaluate.every
    if every is not None:
        spans = (("trial -> close_after", spec.trial.close_after), ("window -> length", spec.window.length), ("input -> max_ahead", spec.input.max_ahead))
        for path, span in spans:
            if span is not None and span // every > spec.evaluate.max_ticks:
                check.fail(
                    "evaluate -> every",
                    f"every {format_duration(every)} makes {span // every:,} evaluations in one {path.split(' -> ')[-1]} "
                    f"({format_duration(span)}), each writing an estimate; at most evaluate.max_ticks = {spec.evaluate.max_ticks:,}"
                    + (" (one event may move event time this far)" if path == "input -> max_ahead" else ""),
                )

    if check.issues:
        raise SpecError(source, check.issues)

    layout = TrialLayout(
        slot_names=tuple(slot_names),
        captures={kind: tuple(items) for kind, items in captures.items()},
        derived=derived,
        defaults=defaults,
        opens_on=frozenset(spec.trial.opens_on) if spec.trial.opens_on else None,
        close_on=frozenset(spec.trial.close_on or ()),
        open_when=open_when,
        close_when=close_when,
        kinds=frozenset(kinds),
        close_after=spec.trial.close_after,
        slot_types=tuple(variable_types[name] for name in slot_names),
        exact_kinds=frozenset(
            kind
            for kind, fields in kinds.items()
            if all(fields[name] != "float" for capture in captures.get(kind, ()) for name in capture.inputs)
        ),
    )
    cells = MetricCells(
        type=metric.type,
        group=metric.group if isinstance(metric.group, str) else tuple(metric.group),
        prediction=metric.prediction,
        label=metric.label,
        condition=metric.condition,
        outcome=metric.outcome,
        supply=metric.supply,
        demand=metric.demand,
        groups=frozenset(metric.groups) if isinstance(metric.groups, list) else None,
    )
    assert prior is not None
    estimator = spec.estimator
    outcomes = Outcomes(cells, tuple(rules))
    monitor = MonitorConfig(
        name=spec.monitor,
        metric=metric.type,
        rule=VerdictRule(
            mode=estimator.verdict,
            threshold=metric.threshold if metric.threshold is not None else 1.0,  # without a threshold no gap is judged (gap_verdict)
            alpha=estimator.alpha,
            hysteresis=estimator.hysteresis,
            ratio=tests_ratio(metric.type),
            pairs=tuple(tuple(pair) for pair in metric.pairs) if metric.pairs else None,
        ),
        prior=prior,
        confidence=estimator.confidence,
        part_estimators=part_estimators,
        interval=estimator.interval,
        family=estimator.family,
        declared_parts=declared_parts(metric),
        declared_pairs=declared_pairs(metric.groups if isinstance(metric.groups, list) else None, metric.pairs),
        declared_groups=len(set(metric.groups)) if isinstance(metric.groups, list) else None,
        max_groups=metric.max_groups,
        bounds=estimator.bounds,
        outcome_range=estimator.outcome_range,
        discount=metric.discount,
        recency=metric.recency,
        min_trials=spec.evidence_floor,
        constraints=tuple(_constraint_rule(constraint, estimator) for constraint in metric.constraints),
        gap_verdict=metric.threshold is not None,
        min_cell=spec.publish.min_cell,
        tick=spec.evaluate.tick,
        max_ticks=spec.evaluate.max_ticks,
        on_close=spec.evaluate.on == "close",
        window=spec.window.kind,
        window_length=spec.window.length or 0,
        window_by=spec.window.by,
        reporters=spec.buckets,
        slot_outcomes=SlotOutcomes(outcomes, layout.variables) if layout.exact_slots else None,
    )
    return Plan(spec, layout, outcomes, monitor)


def _derived(
    check: _Checker, sources: dict[str, Variable], types: dict[str, Any], defaults: dict[str, Any]
) -> tuple[tuple[str, Expression], ...]:
    """Compile expression-only variables in dependency order; report unknown names and cycles."""
    ordered: list[tuple[str, Expression]] = []
    remaining = dict(sources)
    while remaining:
        progressed = False
        for name, variable in list(remaining.items()):
            needs = _names(variable.expr or "")
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


def _prior_expression(check: _Checker, path: str, source: str, types: dict[str, Any]) -> Expression | None:
    """A prior written as an expression; one over no aggregate is a constant, refused outside [0, 1] as the number is
    (an expression over aggregates is clamped to [0, 1] as it is evaluated)."""
    expr = check.expression(path, source, types, "number")
    if expr is not None and not expr.names:
        value = expr.evaluate({})
        if value is not None and not 0 <= value <= 1:
            check.fail(path, f"prior must be in [0, 1]; {source!r} is {value:g}")
            return None
    return expr


def declared_parts(metric: Metric) -> int | None:
    """The parts a metric judges against its threshold, where the metric fixes them (equalized odds: two); None where the
    data does (the strata of conditional statistical parity, each a part, whose standardized part is a point verdict)."""
    if metric.type == "conditional_statistical_parity":
        return None
    return len(PART_NAMES[metric.type])


def _constraint_rule(constraint: Constraint, estimator: Estimator) -> ConstraintRule:
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
