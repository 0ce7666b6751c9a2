"""Compile a validated `Spec` into the pure runtime pieces, checking every cross-reference (kinds, fields, variables, types)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from fairstream.compiler.checks import (
    Checker,
    condition_expression,
    group_fields,
    known_kind,
    prior_expression,
)
from fairstream.compiler.monitor_config import monitor_config
from fairstream.compiler.signals import compile_triggers, compile_windows
from fairstream.compiler.variables import Variables, compile_variables
from fairstream.language.expressions import Expression, ExprType
from fairstream.language.metric import PartlySeenLabel, label_variable
from fairstream.language.models import Spec
from fairstream.monitoring.config import MonitorConfig
from fairstream.monitoring.triggers import OPEN_TRIALS
from fairstream.reading.parse import RecordParser
from fairstream.reading.typed import TypedParser, record_parser
from fairstream.records.errors import SpecError
from fairstream.records.redact import LetterRecord
from fairstream.records.timefmt import format_duration
from fairstream.trials.layout import TrialLayout
from fairstream.trials.outcomes import PART_NAMES, AggregateRule, MetricCells, Outcomes, SlotOutcomes

if TYPE_CHECKING:
    from fairstream.estimators.proxy import ProxyLayout

_FIELD_TYPES: dict[str, ExprType] = {"int": "number", "float": "number", "str": "string", "bool": "bool", "probabilities": "probabilities"}
PROXY_METRICS = ("demographic_parity", "disparate_impact", "equal_opportunity", "equalized_odds", "predictive_parity")
"""The metrics whose groups may be probabilities: rates of events, each a ratio of two means the moments estimate."""


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
        columns = {name for fields in self.spec.input.kinds.values() for name, kind in fields.items() if kind == "probabilities"}
        redact += tuple(f"{name}_*" for name in redact if name in columns)  # its CSV columns
        return LetterRecord(keep=policy.record, max_chars=policy.max_chars, redact=redact)


def _slot_types(variables: Variables, kinds: dict[str, dict[str, str]]) -> tuple[str, ...]:
    """Each slot's type as a trial layout weighs it: "int" for a number that only ever holds int fields' values as
    read (first, last, max or min of an `int` field: an int field refuses floats and booleans, so equal values are
    alike), else its variable's type ("number" may hold floats, where 1 == 1.0 and 0.0 == -0.0 print differently)."""
    types = []
    for slot, name in enumerate(variables.slot_names):
        feeding = [(kind, capture) for kind, captures in variables.captures.items() for capture in captures if capture.slot == slot]
        whole = bool(feeding) and all(
            capture.mode in ("first", "last", "max", "min") and capture.field is not None and capture.elapsed is None and kinds[kind].get(capture.field) == "int"
            for kind, capture in feeding
        )
        types.append("int" if variables.types[name] == "number" and whole else variables.types[name])
    return tuple(types)


def build_plan(spec: Spec, source: str = "<spec>") -> Plan:
    """Check the spec's cross-references and compile it; raises `SpecError` with every issue found."""
    check = Checker()
    kinds = spec.input.kinds
    field_types = {kind: {name: _FIELD_TYPES[t] for name, t in fields.items()} for kind, fields in kinds.items()}
    for label, listed in (("opens_on", spec.trial.opens_on), ("close_on", spec.trial.close_on)):
        for index, kind in enumerate(listed or ()):
            known_kind(check, f"trial -> {label} -> {index}", kind, kinds)
    open_when, close_when = (
        condition_expression(check, f"trial -> {label}", source, field_types) if source else None
        for label, source in (("opens_when", spec.trial.opens_when), ("closes_when", spec.trial.closes_when))
    )
    variables = compile_variables(check, spec, field_types)
    _check_metric_references(check, spec, variables.types)
    proxy = _proxy_layout(check, spec, variables.types)
    rules = _aggregate_rules(check, spec, variables.types)
    prior, part_estimators = _estimators(check, spec)
    _check_spans(check, spec)
    windows = compile_windows(check, spec, field_types)
    triggers = compile_triggers(check, spec, windows)
    if check.issues:
        raise SpecError(source, check.issues)

    layout = TrialLayout(
        slot_names=variables.slot_names,
        captures=variables.captures,
        derived=variables.derived,
        defaults=variables.defaults,
        opens_on=frozenset(spec.trial.opens_on) if spec.trial.opens_on else None,
        close_on=frozenset(spec.trial.close_on or ()),
        open_when=open_when,
        close_when=close_when,
        kinds=frozenset(kinds),
        close_after=spec.trial.close_after,
        slot_types=_slot_types(variables, kinds),
        exact_kinds=frozenset(
            kind
            for kind, fields in kinds.items()
            if all(fields.get(name) != "float" for capture in variables.captures.get(kind, ()) for name in capture.inputs)
        ),
    )
    outcomes = Outcomes(_metric_cells(spec, proxy), rules)
    assert prior is not None  # a prior that did not compile is an issue raised above
    slot_outcomes = SlotOutcomes(outcomes, layout.variables) if layout.exact_slots else None
    config = monitor_config(spec, prior, part_estimators, slot_outcomes, proxy)
    counts_open = any(OPEN_TRIALS in trigger.when.names for trigger in triggers)
    config = replace(config, counting=replace(config.counting, events=windows, open_trials=counts_open), triggers=triggers)
    return Plan(spec, layout, outcomes, config)


def _check_metric_references(check: Checker, spec: Spec, variable_types: dict[str, Any]) -> None:
    """Every variable the metric names exists and has the type its role needs."""
    metric = spec.metric
    group_names = [metric.group] if isinstance(metric.group, str) else metric.group
    references = [(f"group -> {i}" if len(group_names) > 1 else "group", name) for i, name in enumerate(group_names)]
    references += [(role, getattr(metric, role)) for role in ("prediction", "condition", "given", "outcome", "supply", "demand", "propensity", "score", "weight")]
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
        elif role in ("outcome", "supply", "demand", "propensity", "score", "weight") and variable_types.get(name) not in ("number", None):
            check.fail(f"metric -> {role}", f"must name a numeric variable; {name!r} is a {variable_types[name]}")


def _aggregate_rules(check: Checker, spec: Spec, variable_types: dict[str, Any]) -> tuple[AggregateRule, ...]:
    """The spec's aggregates, each a count or a sum of a numeric variable over the trials its condition selects."""
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
    return tuple(rules)


def _estimators(check: Checker, spec: Spec) -> tuple[float | Expression | None, dict[str, tuple[float | Expression | None, float | None]]]:
    """The prior (a number, or an expression over the aggregates) and each part's own prior and κ."""
    prior: float | Expression | None = spec.estimator.prior
    aggregate_types = {name: "number" for name in spec.aggregates}
    if isinstance(spec.estimator.prior, str):
        prior = prior_expression(check, "estimator -> prior", spec.estimator.prior, aggregate_types)
    part_estimators: dict[str, tuple[float | Expression | None, float | None]] = {}
    for part, own in spec.estimator.parts.items():
        path = f"estimator -> parts -> {part}"
        known = PART_NAMES[spec.metric.type]
        if part.split("[", 1)[0] not in known:
            check.fail(path, f"{spec.metric.type} has no part {part!r}; its parts: {', '.join(known)}")
        own_prior = prior_expression(check, f"{path} -> prior", own.prior, aggregate_types) if isinstance(own.prior, str) else own.prior
        part_estimators[part] = (own_prior, own.confidence)
    return prior, part_estimators


def _check_spans(check: Checker, spec: Spec) -> None:
    """A sliding window by opened time outlasts a trial; no span asks for more evaluations than evaluate.max_ticks."""
    window, span = spec.window, spec.trial.close_after
    if window.kind == "sliding" and window.by == "opened" and span is not None and not spec.trial.close_on and spec.trial.closes_when is None:
        if window.length is not None and window.length <= span:
            check.fail(
                "window -> length",
                f"a sliding window of {format_duration(window.length)} by opened time never holds a trial that closes "
                f"{format_duration(span)} after it opens; make it longer than trial.close_after",
            )
    every = spec.evaluate.every
    if every is None:
        return
    spans = (("trial -> close_after", spec.trial.close_after), ("window -> length", spec.window.length), ("input -> max_ahead", spec.input.max_ahead))
    for path, length in spans:
        if length is not None and length // every > spec.evaluate.max_ticks:
            check.fail(
                "evaluate -> every",
                f"every {format_duration(every)} makes {length // every:,} evaluations in one {path.split(' -> ')[-1]} "
                f"({format_duration(length)}), each writing an estimate; at most evaluate.max_ticks = {spec.evaluate.max_ticks:,}"
                + (" (one event may move event time this far)" if path == "input -> max_ahead" else ""),
            )


def _proxy_layout(check: Checker, spec: Spec, variable_types: dict[str, Any]) -> ProxyLayout | None:
    """Where the metric's group variable holds probabilities: the groups they are over (the metric's listed groups), as
    long as the metric is one the moments estimate."""
    metric = spec.metric
    for name in (name for name, variable in spec.variables.items() if variable.truth is not None and name != metric.group):
        check.fail(f"variables -> {name} -> truth", f"truth checks the metric's group ({metric.group!r}); {name!r} is not it")
    names = [metric.group] if isinstance(metric.group, str) else metric.group
    if not any(variable_types.get(name) == "probabilities" for name in names):
        return None
    from fairstream.estimators.proxy import ProxyLayout  # groups as probabilities alone need numpy
    from fairstream.proxies.bisg import BISG_GROUPS

    truth = isinstance(metric.group, str) and spec.variables[metric.group].truth is not None

    if not isinstance(metric.group, str):
        check.fail("metric -> group", "a group given as probabilities stands alone: it cannot be intersected with other group variables")
    elif metric.type not in PROXY_METRICS:
        check.fail("metric -> type", f"{metric.type} cannot take groups given as probabilities; these can: {', '.join(PROXY_METRICS)}")
    elif isinstance(metric.label, PartlySeenLabel):
        check.fail("metric -> label", "a label seen only for some trials cannot be combined with groups given as probabilities")
    elif spec.estimator.verdict == "change":
        check.fail("estimator -> verdict", "groups given as probabilities take point, confident or anytime verdicts, not change")
    elif metric.compare == "overall":
        check.fail("metric -> compare", "groups given as probabilities are judged in pairs of groups: leave compare at pairs")
    elif metric.weight is not None:
        check.fail("metric -> weight", "groups given as probabilities weigh each trial by its probabilities already; leave weight out")
    elif spec.variables[metric.group].bisg is not None:
        if isinstance(metric.groups, list) and set(metric.groups) != set(BISG_GROUPS):
            check.fail("metric -> groups", f"bisg gives probabilities for {', '.join(BISG_GROUPS)}: list them all or leave groups: all (pairs picks the comparisons)")
        else:
            return ProxyLayout(tuple(metric.groups) if isinstance(metric.groups, list) else BISG_GROUPS, calibration=truth)
    elif not isinstance(metric.groups, list):
        check.fail("metric -> groups", f"list the groups {metric.group!r} gives probabilities for (e.g. [white, black, hispanic, api, native, multiple])")
    else:
        return ProxyLayout(tuple(metric.groups), calibration=truth)
    return None


def _metric_cells(spec: Spec, proxy: ProxyLayout | None) -> MetricCells:
    """What turns a closed trial's variables into the metric's cells."""
    metric = spec.metric
    return MetricCells(
        type=metric.type,
        group=metric.group if isinstance(metric.group, str) else tuple(metric.group),
        prediction=metric.prediction,
        label=label_variable(metric),
        observed_when=metric.label.observed_when if isinstance(metric.label, PartlySeenLabel) else None,
        propensity=metric.propensity,
        weight=metric.weight,
        condition=metric.condition,
        given=metric.given,
        outcome=metric.outcome,
        supply=metric.supply,
        demand=metric.demand,
        score=metric.score,
        median=metric.median,
        groups=frozenset(metric.groups) if isinstance(metric.groups, list) else None,
        proxy=proxy,
    )
