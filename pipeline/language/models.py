"""Pydantic models of a monitor spec: the YAML a user writes, validated field by field; `Spec` assembles the sections of
`stream`, `metric` and `estimator` with the shield and what records may publish."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from fairstream.language.estimator import Estimator, Evaluate, Window
from fairstream.language.fields import Cadence, Name, SpecModel
from fairstream.language.metric import CONSTRAINT_FLOOR, Baseline, Metric, PartlySeenLabel, default_floor, tests_ratio
from fairstream.language.signals import EventWindow, Trigger
from fairstream.language.stream import Aggregate, InputSchema, TrialSpec, Variable
from fairstream.records.timefmt import DAY, format_duration


class ShieldSpec(SpecModel):
    """An energy shield on the decision path (two groups): which events carry decisions, and the target.

    With the groups' raw acceptance `rates` the shield's steepness is synthesized: the least steep member whose
    probability of the gap leaving S over [burn_in, horizon] is at most `max_violation`. A `steepness` overrides it.
    For equal opportunity the gap is the true-positive rates' and every count is of the qualified: `rates` are the raw
    TPRs, `share` the first group's share of the qualified, and each decision counts once its label event says so.
    """

    decisions: str = Field(description="event kind that carries a decision")
    group: str = Field(description="field naming the decision's group")
    decision: str = Field(description="field with the recommended decision (bool, or 0/1)")
    groups: list[str] = Field(
        min_length=2,
        description="the groups compared: with two, the fairness value is rate(first) − rate(second); with more, the spread "
        "max − min of their rates (demographic parity, S = [0, s])",
    )
    burn_in: int = Field(100, ge=1, description="decisions before the running target applies")
    running: tuple[float, float] = Field((-0.1, 0.1), description="running target S for the demographic-parity gap")
    limit: tuple[float, float] = Field((-0.05, 0.05), description="limit target L ⊆ S")
    rates: list[Annotated[float, Field(ge=0, le=1)]] | None = Field(
        None, description="the decision maker's raw acceptance rates of the groups, in the order of `groups`"
    )
    share: float = Field(0.5, gt=0, lt=1, description="two groups: the share of decisions about the first group")
    shares: list[Annotated[float, Field(gt=0, lt=1)]] | None = Field(
        None, description="three or more groups: each group's share of the decisions, in the order of `groups` (default: equal)"
    )
    raw_gap: float | None = Field(
        None,
        ge=-1,
        le=1,
        description="the raw gap alone, when the rates are not known: the shield for it, at a `steepness` set by hand "
        "(no guarantee is computed); leave out both `rates` and `raw_gap` for the adaptive shield that estimates them",
    )
    max_violation: float = Field(0.05, gt=0, lt=1, description="λ: bound on the probability that the gap leaves S after the burn-in")
    horizon: int = Field(2000, ge=1, description="decisions over which that probability is bounded")
    confidence: float = Field(0.99, gt=0, lt=1, description="confidence of the bound when it is computed from simulated streams")
    steepness: float | None = Field(
        None, ge=0, le=1, description="member α of the monotone energy family, set by hand (overrides the synthesis; the adaptive shield's default is 0.5)"
    )
    settle_margin: float = Field(
        0.01, ge=0, lt=1, description="the gap settles this far inside L, so finite streams end inside it (at slightly more interference)"
    )
    seed: int = Field(0, ge=0, description="with the decision id, fixes every random draw, so a replay makes the same flips")
    status_every: int = Field(100, ge=1, description="decisions between shield.status records (fairness value, targets and counts, beside the estimates)")
    cost: str | None = Field(None, description="optional numeric field: the cost of flipping this decision, reported with the flip")
    criterion: Literal["demographic_parity", "equal_opportunity"] = Field(
        "demographic_parity",
        description="demographic_parity: the gap in acceptance rates; equal_opportunity: in true-positive rates, over the "
        "qualified, each decision counted when its label arrives (then rates are the raw TPRs, and burn_in, horizon and "
        "share count the qualified)",
    )
    labels: str | None = Field(None, description="equal opportunity: the event kind that reveals a decision's true label (same key)")
    label: str | None = Field(None, description="equal opportunity: the field with the true label (bool, or 0/1; 1: qualified)")
    max_pending: int = Field(
        100_000, ge=1, description="equal opportunity: decisions kept awaiting their label; beyond, the oldest is dropped and counted"
    )
    rates_within: tuple[tuple[Annotated[float, Field(ge=0, le=1)], Annotated[float, Field(ge=0, le=1)]], tuple[Annotated[float, Field(ge=0, le=1)], Annotated[float, Field(ge=0, le=1)]]] | None = Field(
        None,
        description="adaptive shield (no rates): the ranges [[low, high], [low, high]] the groups' raw rates keep to, in the order "
        "of groups; the bound is simulated for every decision maker on a grid over them, constant or jumping halfway between "
        "corners, and λ is refused when it does not hold",
    )
    check_level: float = Field(
        0.01,
        gt=0,
        lt=1,
        description="false-warning level of the checks of the raw rates and shares against those the bound assumed: on a "
        "stream that keeps them, the probability that any check warns over the whole run, however long",
    )
    answer_within: float | None = Field(
        1.0,
        gt=0,
        description="seconds of wall clock a decision (or label) waits for the event-time order before it is answered by the "
        "shield's state then; an event dated at or before it that arrives later is answered marked overtaken (null: wait for "
        "the order, however long)",
    )
    label_delay: int = Field(
        0,
        ge=0,
        description="equal opportunity: a label arrives within this many later decisions; the bound is synthesized for a shield "
        "that decides without the labels of the last label_delay decisions (0: each label before the next decision)",
    )

    @model_validator(mode="after")
    def _groups_rates_and_shares_agree(self) -> ShieldSpec:
        if len(set(self.groups)) != len(self.groups):
            raise ValueError(f"the groups must be distinct; got {self.groups}")
        if self.rates is not None and len(self.rates) != len(self.groups):
            raise ValueError(f"give one rate per group: {len(self.groups)} groups, {len(self.rates)} rates")
        if len(self.groups) == 2:
            if self.shares is not None:
                raise ValueError("two groups take share (the first group's); shares is for three or more")
            return self
        if self.shares is not None and (len(self.shares) != len(self.groups) or abs(sum(self.shares) - 1) > 1e-9):
            raise ValueError(f"shares: one per group, summing to 1; got {self.shares} for {len(self.groups)} groups")
        if self.criterion != "demographic_parity" or self.rates is None:
            raise ValueError("three or more groups: the spread shield keeps demographic parity and needs rates (one per group) to synthesize its bound")
        if self.running[0] != 0 or self.limit[0] != 0:
            raise ValueError(f"three or more groups: the spread max − min is at least 0, so running and limit start at 0; got {list(self.running)}, {list(self.limit)}")
        return self

    @model_validator(mode="after")
    def _ranges_for_the_adaptive_shield(self) -> ShieldSpec:
        if self.rates_within is not None and (self.rates is not None or self.raw_gap is not None):
            raise ValueError("rates_within is for the adaptive shield, which estimates the rates: give it or rates (or raw_gap), not both")
        if self.rates_within is not None and any(low > high for low, high in self.rates_within):
            raise ValueError(f"each range in rates_within is [low, high]; got {[list(r) for r in self.rates_within]}")
        return self

    @model_validator(mode="after")
    def _labels_for_equal_opportunity(self) -> ShieldSpec:
        opportunity = self.criterion == "equal_opportunity"
        if opportunity and (self.labels is None or self.label is None):
            raise ValueError("equal_opportunity counts the qualified: give labels (the event kind with the true label) and label (its field)")
        if not opportunity and (self.labels is not None or self.label is not None or self.label_delay):
            raise ValueError("labels, label and label_delay are for criterion: equal_opportunity")
        if opportunity and self.rates is None and self.raw_gap is None:
            raise ValueError(
                "equal_opportunity needs rates: [TPR_a, TPR_b] (the raw true-positive rates), or raw_gap with a steepness: "
                "the adaptive shield estimates rates from every decision, not from the qualified"
            )
        return self

    @model_validator(mode="after")
    def _one_description_of_the_raw_gap(self) -> ShieldSpec:
        if self.rates is not None and self.raw_gap is not None:
            raise ValueError("give rates or raw_gap, not both: the raw gap is rates[0] − rates[1]")
        if self.raw_gap is not None and self.steepness is None:
            raise ValueError("raw_gap alone needs a steepness: no guarantee can be computed without the rates; give rates: [p_a, p_b] instead")
        if self.horizon < self.burn_in:
            raise ValueError(f"horizon {self.horizon} must be at least the burn-in {self.burn_in}")
        return self


class DeadLetters(SpecModel):
    """What dead letters keep of a rejected record, which may describe a person."""

    record: Literal["excerpt", "hash"] = Field("excerpt", description="excerpt: the record's text; hash: only its SHA-256")
    max_chars: int = Field(2000, ge=0, description="an excerpt is cut after this many characters")
    max_file_bytes: int = Field(
        100_000_000, ge=0, description="a run writing files stops writing dead letters once its dead-letter file has this many bytes; later ones are only counted"
    )
    redact: list[str] | None = Field(
        None,
        description="fields whose values an excerpt replaces with <redacted>; by default the fields that define groups (the "
        "metric's group and condition variables, the shield's group); [] keeps every field",
    )


class Publish(SpecModel):
    """What estimate and alert records may say about small groups of people."""

    min_cell: int = Field(
        10,
        ge=1,
        description="a group's cell (its trials in one part) is published with its estimate, counts and interval only when it "
        "counts at least this many trials; smaller cells are marked suppressed (verdicts still use the real counts)",
    )
    every: Cadence | None = Field(
        None,
        description="write estimate records at this cadence: a span of event time (`7d`, UTC-aligned) or `<n> closes` (with "
        "evaluate: on: close), and whenever a part's status or violating pair changes, and at the input's end; every "
        "evaluation still judges and alerts. Default: an estimate record at every evaluation",
    )


class MetricEntry(SpecModel):
    """One property of a spec with several (`metrics:`): its own metric and estimator, alerts and estimates, under the
    monitor name `<monitor>.<name>`; input, trial and variables are the spec's."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]
    metric: Metric
    estimator: Estimator | None = Field(None, description="default: the spec's estimator section, else the defaults")


class Spec(SpecModel):
    """A monitor: input schema, trial lifecycle, per-trial variables, the metric, the estimator and the cadence."""

    monitor: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="the monitor's name, in every record it writes")]
    description: str = Field("", description="one line for people: what the monitor watches")
    input: InputSchema
    trial: TrialSpec
    variables: dict[Name, Variable] = Field(min_length=1)
    aggregates: dict[Name, Aggregate] = Field(default_factory=dict)
    metric: Metric
    estimator: Estimator = Estimator()
    evaluate: Evaluate = Evaluate(every=DAY)
    window: Window = Window()
    shield: ShieldSpec | None = None
    dead_letters: DeadLetters = DeadLetters()
    publish: Publish = Publish()
    windows: dict[Name, EventWindow] = Field(
        default_factory=dict, description="aggregates of the input's raw events over sliding spans of event time, published in each estimate record"
    )
    triggers: list[Trigger] = Field(default_factory=list, description="conditions over the monitor's values, each a fairness.trigger record when it turns")
    buckets: int = Field(16, ge=1, le=4096, description="trial buckets of input that is not keyed (input.keyed: false): its unit of parallelism; fixed for a recovery store")

    @property
    def evidence_floor(self) -> int:
        """The trials a group needs in a part before it takes part in verdicts: `estimator.min_trials`, or by default
        enough that a point verdict's noise is ε/2 at worst (a rate's standard error at p = 1/2 is 1/(2√n)), so a fair
        group strays beyond ε at a check about one time in twenty (`fairstream bench evidence` simulates it)."""
        if self.estimator.min_trials is not None:
            return self.estimator.min_trials
        if self.metric.constraints:
            return CONSTRAINT_FLOOR
        if self.estimator.verdict not in ("point", "change") or self.metric.threshold is None:
            return 1
        return default_floor(self.metric.threshold, ratio=tests_ratio(self.metric.type))

    @model_validator(mode="after")
    def _compatible(self) -> Spec:
        if self.window.kind != "cumulative":
            if self.evaluate.every is None:
                raise ValueError("windows need evaluate: {every: <duration>}")
            if self.window.length % self.evaluate.every:
                raise ValueError("the window length must be a multiple of evaluate.every")
            if self.estimator.verdict == "anytime":
                raise ValueError("anytime verdicts hold over the whole stream; use a cumulative window")
        if self.estimator.verdict == "change":
            if self.window.kind != "cumulative":
                raise ValueError("change verdicts read every closed trial as it comes; use a cumulative window")
            if self.metric.type in ("benefit_rate", "scoring_rate") or isinstance(self.metric.label, PartlySeenLabel):
                raise ValueError("change verdicts compare rates or mean outcomes of trials: not benefit or scoring rates, nor partly seen labels")
            if self.estimator.shift is None and self.metric.threshold is None:
                raise ValueError("change verdicts need estimator.shift (the smallest change worth finding) where the metric has no threshold")
        if self.metric.type == "scoring_rate" and self.metric.median is None and self.estimator.verdict == "anytime":
            raise ValueError(
                "a scoring rate against the running median changes a trial's count as later scores move the median, so no bet on it "
                "is settled when the trial closes: give metric.median (e.g. the last audit period's), or use point or confident verdicts"
            )
        if isinstance(self.metric.label, PartlySeenLabel) and self.estimator.verdict == "anytime":
            raise ValueError("partly seen labels are judged by bounds that hold at one look: use point or confident verdicts")
        if self.metric.type == "delayed_impact" and self.estimator.verdict == "anytime" and self.estimator.outcome_range is None:
            raise ValueError("anytime verdicts on mean outcomes bet on bounded outcomes: set estimator.outcome_range: [low, high]")
        weighted = "discount" if self.metric.discount < 1 else "recency" if self.metric.recency < 1 else None
        if weighted and (self.evaluate.every is None or self.window.kind == "sliding"):
            raise ValueError(f"metric.{weighted} weighs evaluation ticks: it needs evaluate: {{every: <duration>}} and a cumulative or periodic window")
        if self.metric.type == "benefit_rate" and self.estimator.verdict != "point":
            raise ValueError("benefit_rate supports point verdicts")
        hoeffding = self.estimator.bounds == "hoeffding" or any(c.bound == "hoeffding" for c in self.metric.constraints)
        if self.metric.type == "delayed_impact" and hoeffding and self.estimator.outcome_range is None:
            raise ValueError("hoeffding bounds need estimator.outcome_range: [low, high]")
        if self.window.kind != "cumulative" and any(isinstance(c.tau, Baseline) for c in self.metric.constraints):
            raise ValueError("a baseline constraint compares with the run's start; use a cumulative window")
        if tests_ratio(self.metric.type) and self.metric.threshold == 1 and self.estimator.min_trials is None and not self.metric.constraints and self.estimator.verdict in ("point", "change"):
            raise ValueError(
                f"metric.threshold {self.metric.threshold} counts any difference as a violation, so no number of trials keeps a point "
                "verdict's noise inside it: give estimator.min_trials, the trials a group needs before it is judged"
            )
        if self.metric.weight is not None and self.estimator.verdict not in ("point", "confident"):
            raise ValueError(
                "weighted rates take point or confident verdicts: the anytime and change tests bet on each trial's outcome, "
                "and a weighted outcome is bounded only by the largest weight, which the stream does not declare"
            )
        overall_verdicts = ("point",) if tests_ratio(self.metric.type) else ("point", "confident")
        if self.metric.compare == "overall" and (self.estimator.verdict not in overall_verdicts or isinstance(self.metric.label, PartlySeenLabel)):
            raise ValueError(
                f"compare: overall takes {' or '.join(overall_verdicts)} verdicts on rates seen whole: a group's rate and the "
                "overall rate share that group's trials, which the anytime tests (and a ratio's interval) of pairs of groups do not allow for"
            )
        if len({trigger.name for trigger in self.triggers}) != len(self.triggers):
            raise ValueError(f"each trigger needs a name of its own; got {[trigger.name for trigger in self.triggers]}")
        for name, window in self.windows.items():
            tick = self.evaluate.tick
            if window.over % tick:
                raise ValueError(f"windows.{name}.over must be a whole number of evaluation ticks ({format_duration(tick)}); got {format_duration(window.over)}")
        if self.publish.every is not None and self.publish.every[0] == "closes" and self.evaluate.on != "close":
            raise ValueError("publish.every in closes needs evaluate: {on: close}; with evaluate.every give a span of event time, like 7d")
        return self
