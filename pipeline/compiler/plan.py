"""Compile a validated `Spec` into the pure runtime pieces, checking every cross-reference (kinds, fields, variables, types)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairstream.compiler.checks import (
    Checker,
    capture_type,
    condition_expression,
    constraint_rule,
    declared_parts,
    derived_variables,
    field_declared,
    fold_capture,
    group_fields,
    prior_expression,
)
from fairstream.language.expressions import Expression, ExprType
from fairstream.language.metric import PartlySeenLabel, label_variable, tests_ratio
from fairstream.language.models import Spec
from fairstream.language.stream import Variable
from fairstream.monitor import MonitorConfig
from fairstream.reading.parse import RecordParser
from fairstream.reading.typed import TypedParser, record_parser
from fairstream.records.errors import SpecError
from fairstream.records.redact import LetterRecord
from fairstream.records.timefmt import format_duration, parse_duration
from fairstream.trials.layout import Capture, TrialLayout
from fairstream.trials.outcomes import PART_NAMES, AggregateRule, MetricCells, Outcomes, SlotOutcomes
from fairstream.verdicts.budget import declared_pairs
from fairstream.verdicts.judge import VerdictRule

_FIELD_TYPES: dict[str, ExprType] = {"int": "number", "float": "number", "str": "string", "bool": "bool"}


@dataclass(frozen=True)
class Plan:
    """A spec ready to run: its models plus the compiled trial layout, outcome mapping and monitor settings."""

    spec: Spec
    layout: TrialLayout
    outcomes: Outcomes
    monitor: MonitorConfig
    text: str = ""
    """The spec as written (a file's text; YAML of a spec given as a mapping), for audit reports beside its sha256."""

    @property
    def sha256(self) -> str:
        """The sha256 of the spec's text: what every record it produced names (see `records.chain`)."""
        return self.monitor.spec_sha256

    def parser(self, *, strings: bool = False) -> RecordParser | TypedParser:
        """The spec's record parser: typed decoding where its input schema allows it, else (and as its fallback) `RecordParser`."""
        return record_parser(self.spec.input, RecordParser(self.spec.input, strings=strings, letter_record=self.letter_record), strings=strings)

    def shares_trials(self, other: Plan) -> bool:
        """Whether `other` counts the same trials (input, trial, variables and tick agree), so one computation serves both."""
        mine, theirs = self.spec, other.spec
        return (mine.input, mine.trial, mine.variables, mine.evaluate.tick) == (theirs.input, theirs.trial, theirs.variables, theirs.evaluate.tick)

    @property
    def kind_rank(self) -> dict[str, int]:
        """Each event kind's place in `input.kinds`: how events of equal time are ordered."""
        return {kind: rank for rank, kind in enumerate(self.spec.input.kinds)}

    @property
    def letter_record(self) -> LetterRecord:
        """What the spec's dead letters keep of a rejected record."""
        policy = self.spec.dead_letters
        redact = group_fields(self.spec) if policy.redact is None else tuple(policy.redact)
        return LetterRecord(keep=policy.record, max_chars=policy.max_chars, redact=redact)


def build_plan(spec: Spec, source: str = "<spec>") -> Plan:
    """Check the spec's cross-references and compile it; raises `SpecError` with every issue found."""
    check = Checker()
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
        condition_expression(check, f"trial -> {label}", source, field_types) if source else None
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
            capture = fold_capture(check, path, slot, variable, kind, fields)
            if capture is not None:
                captures.setdefault(kind, []).append(capture)
                variable_types[name] = "number" if fold[0] in ("count", "sum") else capture_type(capture, fields)
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
            if not field_declared(check, f"{path} -> field", kind, fields, variable.field):
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

    derived = derived_variables(check, derived_sources, variable_types, defaults)
    metric = spec.metric
    group_names = [metric.group] if isinstance(metric.group, str) else metric.group
    references = [(f"group -> {i}" if len(group_names) > 1 else "group", name) for i, name in enumerate(group_names)]
    references += [(role, getattr(metric, role)) for role in ("prediction", "condition", "given", "outcome", "supply", "demand", "propensity", "score")]
    if isinstance(metric.label, PartlySeenLabel):
        references += [("label -> variable", metric.label.variable), ("label -> observed_when", metric.label.observed_when)]
    elif metric.label is not None:
        references.append(("label", metric.label))
    for role, name in references:
        if name is None:
            continue
        if name not in spec.variables:
            check.fail(f"metric -> {role}", f"unknown variable {name!r}; variables: {', '.join(spec.variables)}")
        elif role.split(" ")[0] in ("prediction", "label", "given") and variable_types.get(name) not in ("bool", None):
            check.fail(f"metric -> {role}", f"must name a boolean variable; {name!r} is a {variable_types[name]}")
        elif role in ("outcome", "supply", "demand", "propensity", "score") and variable_types.get(name) not in ("number", None):
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
        prior = prior_expression(check, "estimator -> prior", spec.estimator.prior, aggregate_types)
    part_estimators: dict[str, tuple[float | Expression | None, float | None]] = {}
    for part, own in spec.estimator.parts.items():
        path = f"estimator -> parts -> {part}"
        known = PART_NAMES[metric.type]
        if part.split("[", 1)[0] not in known:
            check.fail(path, f"{metric.type} has no part {part!r}; its parts: {', '.join(known)}")
        own_prior = prior_expression(check, f"{path} -> prior", own.prior, aggregate_types) if isinstance(own.prior, str) else own.prior
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
        label=label_variable(metric),
        observed_when=metric.label.observed_when if isinstance(metric.label, PartlySeenLabel) else None,
        propensity=metric.propensity,
        condition=metric.condition,
        given=metric.given,
        outcome=metric.outcome,
        supply=metric.supply,
        demand=metric.demand,
        score=metric.score,
        median=metric.median,
        groups=frozenset(metric.groups) if isinstance(metric.groups, list) else None,
    )
    assert prior is not None
    estimator = spec.estimator
    outcomes = Outcomes(cells, tuple(rules))
    monitor = MonitorConfig(
        name=spec.monitor,
        metric=metric.type,
        median=metric.median,
        partly_seen=isinstance(metric.label, PartlySeenLabel),
        weighted=metric.propensity is not None,
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
        listed_groups=tuple(metric.groups) if isinstance(metric.groups, list) else None,
        label_horizon=spec.trial.close_after,
        max_groups=metric.max_groups,
        bounds=estimator.bounds,
        outcome_range=estimator.outcome_range,
        discount=metric.discount,
        recency=metric.recency,
        min_trials=spec.evidence_floor,
        constraints=tuple(constraint_rule(constraint, estimator) for constraint in metric.constraints),
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
