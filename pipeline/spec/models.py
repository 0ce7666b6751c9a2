"""Pydantic models of a monitor spec: the YAML a user writes, validated field by field."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, ValidationInfo, field_validator, model_validator

from fairstream.timefmt import DAY, HOUR, format_duration, parse_duration

Duration = Annotated[
    int,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str),
    Field(json_schema_extra={"type": "string", "pattern": r"^\d+(w|d|h|m|s|ms)$"}),
]
"""A span of event time written as `<n><unit>` (`730d`, `12h`, `250ms`), held as milliseconds."""

FieldType = Literal["int", "float", "str", "bool"]
MetricType = Literal[
    "demographic_parity",
    "conditional_statistical_parity",
    "equal_opportunity",
    "equalized_odds",
    "predictive_parity",
    "disparate_impact",
    "delayed_impact",
    "benefit_rate",
]
RATIO_METRICS = frozenset({"disparate_impact"})
"""Metrics whose verdict bounds the ratio min / max of the group rates from below, not their gap max − min from above."""


def tests_ratio(metric: str) -> bool:
    """Whether `metric`'s verdict is on the ratio between groups (see `RATIO_METRICS`)."""
    return metric in RATIO_METRICS


Name = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
FieldPath = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")]
"""A field of a record, or a dotted path into nested JSON objects (`applicant.race`)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class InputSchema(_Model):
    """Which fields of a record carry the event time, the dependence key and the event kind."""

    time: FieldPath = Field(description="field holding the event time (a dotted path reaches into nested objects: meta.time)")
    time_format: str = Field("iso", description="iso, epoch_s, epoch_ms, or a strptime pattern such as %Y-%m-%d")
    key: FieldPath | list[FieldPath] = Field(
        description="field holding the dependence key: events with one key form one trial; a list of fields is a composite "
        "key (`[applicant_id, branch]`: one trial per applicant and branch)"
    )
    max_key_chars: int = Field(256, ge=1, description="a longer dependence key is a dead letter (key_too_long): every open trial holds its key")
    max_value_chars: int = Field(
        256, ge=1, description="a longer string in a declared field is a dead letter (value_too_long): a group name is in every record that counts it"
    )
    kind: FieldPath | None = Field(None, description="field holding the event kind; omit it when every record is of the one kind in kinds")
    kinds: dict[str, dict[FieldPath, FieldType]] = Field(
        description="per event kind, the fields (or dotted paths) it must carry and their types", min_length=1
    )
    columns: list[str] | None = Field(None, description="a CSV input without a header line: its column names, in order")
    lateness: Duration = Field(0, description="how far event time may run backwards before an event is late")
    max_future: Duration | None = Field(
        HOUR, description="an event dated more than this after the wall clock is a dead letter (future); null: no limit"
    )
    max_ahead: Duration | None = Field(
        None, description="an event dated more than this after its partition's latest event time is a dead letter (future); null: no limit"
    )
    keyed: bool = Field(
        True,
        description="every event of a dependence key is in one input partition (a topic keyed by it, files split by it): trials "
        "are kept where their partition is read and only per-tick counts travel; false: events are re-keyed into the trial buckets",
    )
    partitioner: Literal["murmur2", "crc32", "none"] = Field(
        "murmur2",
        description="with keyed input, how keys were placed on partitions, checked on every event (an event elsewhere is a "
        "wrong_partition dead letter): murmur2 (Kafka's Java client, fairstream replay and split), crc32 (librdkafka's "
        "default), none (not checked)",
    )

    @model_validator(mode="after")
    def _a_composite_key_names_distinct_fields(self) -> InputSchema:
        if isinstance(self.key, list) and (not self.key or len(set(self.key)) != len(self.key)):
            raise ValueError(f"a composite key names one or more distinct fields; got {self.key}")
        return self

    @model_validator(mode="after")
    def _one_kind_without_a_kind_field(self) -> InputSchema:
        if self.kind is None and len(self.kinds) != 1:
            raise ValueError(f"without a kind field every record is of one kind, so kinds must name exactly one; got {', '.join(self.kinds)}")
        return self


class TrialSpec(_Model):
    """When a trial (the events of one dependence key) opens and closes."""

    opens_on: list[str] | None = Field(None, description="kinds that may open a trial; other kinds only join open trials")
    opens_when: str | None = Field(
        None, description="only an event satisfying this expression opens a trial (over its fields and `kind`: \"kind == 'APPLY' and amount > 0\")"
    )
    close_after: Duration | None = Field(None, description="close this long after the trial opened (event time)")
    close_on: list[str] | None = Field(None, description="close when an event of one of these kinds arrives")
    closes_when: str | None = Field(
        None, description="close when an event satisfying this expression arrives (over its fields and `kind`: \"kind == 'DECISION' and final\")"
    )
    max_open: int = Field(
        10_000_000,
        ge=1,
        description="open trials kept at most (split evenly over the input partitions, or the buckets of input that is not keyed); beyond it the earliest opened are dropped, "
        "counted as evicted, their outcomes not counted",
    )

    @model_validator(mode="after")
    def _closes_somehow(self) -> TrialSpec:
        if self.close_after is None and not self.close_on and self.closes_when is None:
            raise ValueError("a trial needs close_after, close_on or closes_when")
        return self


FOLDS = ("count", "sum", "max", "min")
"""Variables that fold every event of a kind in the trial: how many, their total, their largest or smallest value."""


class Variable(_Model):
    """A per-trial value: a field or expression of the first/last event of a kind, an existence test, a count, sum, max or
    min over a kind's events, or an expression over other variables."""

    first: str | None = Field(None, description="take the value from the first event of this kind")
    last: str | None = Field(None, description="take the value from the last event of this kind")
    field: str | None = Field(None, description="with first/last/sum/max/min: the field to take")
    expr: str | None = Field(None, description="with first/last/sum/max/min: an expression over that event's fields; alone: over other variables")
    elapsed: Literal["s", "m", "h", "d", "w"] | None = Field(
        None, description="with first/last: instead of a field, the time from the trial's opening to that event, in this unit (d: days)"
    )
    exists: str | None = Field(None, description="true when an event of this kind belongs to the trial")
    count: str | None = Field(None, description="how many events of this kind the trial saw")
    sum: str | None = Field(None, description="the total of a field over this kind's events: KIND with field or expr, or KIND.field")
    max: str | None = Field(None, description="the largest value of a field over this kind's events (KIND.field, or with field or expr)")
    min: str | None = Field(None, description="the smallest value of a field over this kind's events (KIND.field, or with field or expr)")
    within: Duration | None = Field(None, description="with exists/count/sum/max/min: only events at most this long after the trial opened")
    where: str | None = Field(None, description="with exists/count/sum/max/min: only events whose fields satisfy this expression")
    default: bool | int | float | str | None = Field(None, description="value when the trial saw no such event")

    @property
    def fold(self) -> tuple[str, str] | None:
        """(count|sum|max|min, the kind) of a folding variable, else None."""
        return next(((name, getattr(self, name)) for name in FOLDS if getattr(self, name) is not None), None)

    @property
    def folded_field(self) -> str | None:
        """The field a sum/max/min reads: `field`, or the part after the kind in the KIND.field shorthand."""
        fold = self.fold
        if fold is None or fold[0] == "count":
            return None
        return self.field if self.field is not None else (fold[1].split(".", 1)[1] if "." in fold[1] else None)

    @property
    def folded_kind(self) -> str | None:
        fold = self.fold
        return None if fold is None else fold[1].split(".", 1)[0]

    @model_validator(mode="after")
    def _one_form(self) -> Variable:
        taken = [name for name in ("first", "last", "exists", *FOLDS) if getattr(self, name) is not None]
        if len(taken) > 1:
            raise ValueError(f"a variable takes one of first, last, exists, {', '.join(FOLDS)}; got {', '.join(taken)}")
        if self.exists is not None or self.count is not None:
            if self.field is not None or self.expr is not None or self.elapsed is not None:
                raise ValueError(f"{'an exists' if self.exists else 'a count'} variable takes within and where, not field, expr or elapsed")
            return self
        fold = self.fold
        if fold is not None:
            shorthand = "." in fold[1]
            if self.elapsed is not None or sum((shorthand, self.field is not None, self.expr is not None)) != 1:
                raise ValueError(f"a {fold[0]} variable reads one value per event: {fold[0]}: KIND.field, or {fold[0]}: KIND with field or expr")
            return self
        if self.within is not None or self.where is not None:
            raise ValueError("within and where belong to exists, count, sum, max and min variables")
        if taken:
            if sum(value is not None for value in (self.field, self.expr, self.elapsed)) != 1:
                raise ValueError(f"a {taken[0]} variable takes exactly one of field, expr, elapsed")
        elif self.expr is None:
            raise ValueError("a variable needs first or last (with field, expr or elapsed), exists, count, sum, max, min, or expr")
        elif self.field is not None or self.elapsed is not None:
            raise ValueError("field and elapsed need first or last")
        return self


class Aggregate(_Model):
    """A running total over closed trials, usable in a dynamic prior (e.g. places / applicants)."""

    count: Literal["trials"] | None = Field(None, description="count closed trials")
    sum: str | None = Field(None, description="sum a numeric variable over closed trials")
    where: str | None = Field(None, description="only trials whose variables satisfy this expression")

    @model_validator(mode="after")
    def _one_op(self) -> Aggregate:
        if (self.count is None) == (self.sum is None):
            raise ValueError("an aggregate takes exactly one of count: trials, sum: <variable>")
        return self


class Baseline(_Model):
    """A constraint's τ taken, per group, from the group's own mean outcome over the first `baseline` of the run."""

    baseline: Duration = Field(description="how long the baseline lasts from the first evaluation (e.g. the previous model's period)")


class Constraint(_Model):
    """A delayed-impact constraint of ELF (Weber et al.): per group, g = τ − E[outcome | group] ≤ 0 (`at_least`; or
    E[outcome | group] − τ ≤ 0, `at_most`), certified when a one-sided 1 − δ upper bound on g is at most 0."""

    tau: float | Baseline = Field(description="the bound on each group's mean outcome: a number, or {baseline: <duration>}")
    direction: Literal["at_least", "at_most"] = Field("at_least", description="at_least: E[outcome | group] ≥ τ; at_most: ≤ τ")
    delta: float = Field(0.05, gt=0, lt=1, description="δ: the constraint is certified with probability at least 1 − δ")
    bound: Literal["student_t", "hoeffding"] | None = Field(
        None, description="one-sided bound on the mean (default: estimator.bounds); anytime verdicts use a betting confidence sequence instead"
    )
    name: Name | None = Field(None, description="the part's name in records (default: mean_outcome>=<τ>, mean_outcome<=baseline(<duration>), …)")

    @property
    def part(self) -> str:
        """The name of the constraint's part in estimates and alerts."""
        if self.name is not None:
            return self.name
        tau = f"baseline({format_duration(self.tau.baseline)})" if isinstance(self.tau, Baseline) else f"{self.tau:g}"
        return f"mean_outcome{'>=' if self.direction == 'at_least' else '<='}{tau}"


class Metric(_Model):
    """The fairness property: which conditional rate must be equal across groups, and how far apart it may be."""

    type: MetricType
    group: str | list[str] = Field(description="variable naming the trial's group, or several for intersectional groups (values joined by ' & ')")
    prediction: str | None = Field(None, description="boolean variable: the decision (e.g. high risk, hired); all rate metrics")
    label: str | None = Field(None, description="boolean variable: the true outcome (equal_opportunity, equalized_odds)")
    condition: str | None = Field(None, description="variable whose values are the strata (conditional_statistical_parity)")
    outcome: str | None = Field(None, description="numeric variable observed later (delayed_impact): its mean per group is compared")
    supply: str | None = Field(None, description="numeric variable: benefit granted (benefit_rate)")
    demand: str | None = Field(None, description="numeric variable: benefit sought (benefit_rate)")
    discount: float = Field(
        1.0, gt=0, le=1, description="benefit_rate: ELBERT's γ, the supply and demand of the t-th evaluation tick of an episode weighted γ^t (1: plain cumulative)"
    )
    recency: float = Field(
        1.0, gt=0, le=1, description="benefit_rate: weight kept per evaluation tick, so the tick T − t ago weighs γ^t (a recency average, not ELBERT's)"
    )
    groups: Literal["all"] | list[str] = Field("all", description="all groups seen, or the groups to compare")
    max_groups: int = Field(
        256, ge=2, description="groups a part tracks at most (the first to appear); the trials of further groups are counted in each estimate's untracked, not estimated"
    )
    pairs: list[tuple[str, str]] | None = Field(None, description="compare only these pairs of groups instead of every pair")
    threshold: float | None = Field(
        None,
        gt=0,
        description="largest tolerated gap between groups (ε), at most 1 between rates, in the outcome's own units between mean "
        "outcomes (delayed_impact); for disparate_impact the smallest tolerated ratio (0.8: four-fifths rule); delayed_impact "
        "with constraints may leave it out (no gap verdict)",
    )
    constraints: list[Constraint] = Field(
        default_factory=list, description="delayed_impact: ELF constraints on each group's mean outcome, each with its own δ (one alert per group not certified)"
    )

    @field_validator("threshold")
    @classmethod
    def _rates_differ_by_at_most_one(cls, threshold: float | None, info: ValidationInfo) -> float | None:
        if threshold is not None and threshold > 1 and info.data.get("type") != "delayed_impact":
            raise ValueError(f"Input should be less than or equal to 1 (a gap between rates, or a ratio; only delayed_impact's mean outcomes take their own units); got {threshold}")
        return threshold

    @model_validator(mode="after")
    def _needs_its_variables(self) -> Metric:
        if self.type == "delayed_impact" and self.outcome is None:
            raise ValueError("delayed_impact needs outcome: the numeric variable whose group means are compared")
        if self.type == "benefit_rate" and (self.supply is None or self.demand is None):
            raise ValueError("benefit_rate needs supply and demand: numeric variables per trial")
        if self.type not in ("delayed_impact", "benefit_rate") and self.prediction is None:
            raise ValueError(f"{self.type} needs prediction: the boolean variable holding the decision")
        if self.type in ("equal_opportunity", "equalized_odds", "predictive_parity") and self.label is None:
            raise ValueError(f"{self.type} needs label: the variable holding the true outcome")
        if self.type == "conditional_statistical_parity" and self.condition is None:
            raise ValueError("conditional_statistical_parity needs condition: the variable holding the stratum")
        if self.threshold is None and not self.constraints:
            raise ValueError("threshold is required (delayed_impact may give constraints instead)")
        if self.constraints and self.type != "delayed_impact":
            raise ValueError(f"constraints bound a mean outcome (delayed_impact); {self.type} takes a threshold")
        parts = [constraint.part for constraint in self.constraints]
        if len(set(parts)) < len(parts):
            raise ValueError(f"two constraints would both be named {next(p for p in parts if parts.count(p) > 1)!r}; give one a name")
        for name in ("discount", "recency"):
            if getattr(self, name) < 1 and self.type != "benefit_rate":
                raise ValueError(f"{name} weighs benefit_rate ticks; {self.type} takes no {name}")
        if self.discount < 1 and self.recency < 1:
            raise ValueError("give discount (ELBERT: early ticks weigh more) or recency (recent ticks weigh more), not both")
        if isinstance(self.groups, list) and len(set(self.groups)) < 2:
            raise ValueError(f"groups needs at least two distinct groups; got {self.groups}")
        for pair in self.pairs or ():
            if pair[0] == pair[1]:
                raise ValueError(f"a pair compares two different groups; got {list(pair)}")
            if isinstance(self.groups, list) and not set(pair) <= set(self.groups):
                raise ValueError(f"pair {list(pair)} names a group outside groups {self.groups}")
        return self


CONSTRAINT_FLOOR = 30
"""The default evidence floor of delayed-impact constraints: an uncertified constraint is a violation, so without a
floor every group would alert on its first outcomes; thirty is where a mean's Student t bound is customarily trusted."""


def default_floor(threshold: float, *, ratio: bool = False) -> int:
    """⌈1/ε²⌉ trials for a gap threshold ε; a ratio threshold τ stands for the gap (1 − τ)/2 at rates near 1/2."""
    gap = (1 - threshold) / 2 if ratio else threshold
    return math.ceil(1 / gap**2 - 1e-9)


class PartEstimator(_Model):
    """A prior and κ of one conditional rate, where it differs from the estimator's (RTLola's `(or: γ)` per probability)."""

    prior: float | str | None = Field(None, description="prior mean γ in [0, 1], or an expression over aggregates; default: the estimator's")
    confidence: float | None = Field(None, ge=0, description="κ in pseudo-trials; default: the estimator's")

    @model_validator(mode="after")
    def _prior_in_range(self) -> PartEstimator:
        if isinstance(self.prior, float) and not 0 <= self.prior <= 1:
            raise ValueError(f"prior must be in [0, 1]; got {self.prior}")
        return self


MIN_ALPHA = 1e-12
"""The smallest error level a spec may ask for."""


class Estimator(_Model):
    """MAP estimate (S_AB + prior·κ)/(S_B + κ) per group, and how a verdict is reached from it."""

    prior: float | str = Field(0.5, description="prior mean γ in [0, 1], or an expression over aggregates")
    confidence: float = Field(0.0, ge=0, description="κ: weight of the prior in pseudo-trials; 0 gives the plain ratio")
    verdict: Literal["point", "confident", "anytime"] = Field(
        "point",
        description="point: the estimated gap exceeds the threshold; confident: the gap's 1−α interval lies above it; "
        "anytime: a test by betting rejects a gap ≤ threshold at level α, valid however often it is checked",
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="error budget of confident and anytime verdicts: split over the monitor's parts and each part's pairs of groups (see family)"
    )
    family: Literal["monitor", "part"] = Field(
        "monitor",
        description="monitor: alpha covers every part, pair and stratum together; part: each part has the whole alpha, so "
        "a monitor of k parts may raise a false alarm with probability up to k·alpha",
    )
    interval: Literal["wilson", "clopper_pearson", "beta_credible"] = Field(
        "wilson",
        description="intervals of the raw counts that confident verdicts rest on, whatever the prior: wilson (gap: Newcombe), "
        "clopper_pearson (exact, conservative); beta_credible is the posterior's credible interval under the prior, which "
        "holds no frequentist error rate (a strong prior decides it, not the data)",
    )
    bounds: Literal["student_t", "hoeffding"] = Field("student_t", description="delayed_impact: bounds on a group's mean outcome")
    outcome_range: tuple[float, float] | None = Field(None, description="delayed_impact with hoeffding: the range every outcome lies in")
    min_trials: int | None = Field(
        None,
        ge=1,
        description="evidence floor: a group takes part in verdicts once it has this many trials in the part; default for point "
        "verdicts ⌈1/ε²⌉ (100 at ε = 0.1; ⌈4/(1−τ)²⌉ for a ratio threshold τ), 30 with delayed-impact constraints, else 1 "
        "(intervals and tests weigh the trials themselves)",
    )
    hysteresis: float = Field(0.0, ge=0, lt=1, description="a violation ends only when the gap is below threshold − hysteresis")
    parts: dict[str, PartEstimator] = Field(
        default_factory=dict,
        description="per conditional rate (e.g. true_positive_rate, false_positive_rate), its own prior and κ; a stratified "
        "part (selection_rate[age=old]) takes its own entry or that of the name before the brackets",
    )

    @field_validator("alpha")
    @classmethod
    def _alpha_within_reach(cls, alpha: float) -> float:
        if alpha < MIN_ALPHA:
            raise ValueError(f"alpha must be at least {MIN_ALPHA:g}: below it no stream gives the evidence, and bounds cost far more to compute")
        return alpha

    @model_validator(mode="after")
    def _prior_in_range(self) -> Estimator:
        if isinstance(self.prior, float) and not 0 <= self.prior <= 1:
            raise ValueError(f"prior must be in [0, 1]; got {self.prior}")
        return self


class Evaluate(_Model):
    """When verdicts are evaluated: every period of event time, or after each closed trial."""

    every: Duration | None = Field(None, description="evaluate at each multiple of this period (event time, UTC-aligned)")
    on: Literal["close"] | None = Field(None, description="close: evaluate after every closed trial")
    resolution: Duration = Field(DAY, description="with on: close, how finely closed trials are batched in event time")
    max_ticks: int = Field(
        1_000_000, ge=1, description="with every: the most evaluations a trial's close_after or the window's length may span"
    )

    @model_validator(mode="after")
    def _one_cadence(self) -> Evaluate:
        if (self.every is None) == (self.on is None):
            raise ValueError("evaluate takes exactly one of every: <duration>, on: close")
        if self.every is not None and self.every <= 0:
            raise ValueError("every must be a positive duration")
        return self

    @property
    def tick(self) -> int:
        """Event-time step at which buckets report closed trials."""
        return self.every if self.every is not None else self.resolution


class Window(_Model):
    """Which closed trials an evaluation counts: all so far, those of the last `length`, or those of the current period."""

    kind: Literal["cumulative", "sliding", "periodic"] = "cumulative"
    length: Duration | None = Field(None, description="sliding: how far back; periodic: the period (UTC-aligned)")
    by: Literal["closed", "opened"] = Field(
        "closed",
        description="which time of a closed trial the window selects on: when it closed (its label arrived), or when it opened "
        "(the decision was made: with labels that come late, the window shows decisions of its own span)",
    )

    @model_validator(mode="after")
    def _length_when_needed(self) -> Window:
        if self.kind != "cumulative" and not self.length:
            raise ValueError(f"a {self.kind} window needs a length, like 365d")
        return self


class ShieldSpec(_Model):
    """An energy shield on the decision path (two-group demographic parity): which events carry decisions, and the target.

    With the groups' raw acceptance `rates` the shield's steepness is synthesized: the least steep member whose
    probability of the gap leaving S over [burn_in, horizon] is at most `max_violation`. A `steepness` overrides it.
    """

    decisions: str = Field(description="event kind that carries a decision")
    group: str = Field(description="field naming the decision's group")
    decision: str = Field(description="field with the recommended decision (bool, or 0/1)")
    groups: tuple[str, str] = Field(description="the two groups; the fairness value is rate(first) − rate(second)")
    burn_in: int = Field(100, ge=1, description="decisions before the running target applies")
    running: tuple[float, float] = Field((-0.1, 0.1), description="running target S for the demographic-parity gap")
    limit: tuple[float, float] = Field((-0.05, 0.05), description="limit target L ⊆ S")
    rates: tuple[Annotated[float, Field(ge=0, le=1)], Annotated[float, Field(ge=0, le=1)]] | None = Field(
        None, description="the decision maker's raw acceptance rates of the two groups, in the order of `groups`"
    )
    share: float = Field(0.5, gt=0, lt=1, description="the share of decisions about the first group")
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

    @model_validator(mode="after")
    def _one_description_of_the_raw_gap(self) -> ShieldSpec:
        if self.rates is not None and self.raw_gap is not None:
            raise ValueError("give rates or raw_gap, not both: the raw gap is rates[0] − rates[1]")
        if self.raw_gap is not None and self.steepness is None:
            raise ValueError("raw_gap alone needs a steepness: no guarantee can be computed without the rates; give rates: [p_a, p_b] instead")
        if self.horizon < self.burn_in:
            raise ValueError(f"horizon {self.horizon} must be at least the burn-in {self.burn_in}")
        return self


class DeadLetters(_Model):
    """What dead letters keep of a rejected record, which may describe a person."""

    record: Literal["excerpt", "hash"] = Field("excerpt", description="excerpt: the record's text; hash: only its SHA-256")
    max_chars: int = Field(2000, ge=0, description="an excerpt is cut after this many characters")
    redact: list[str] = Field(default_factory=list, description="fields whose values an excerpt replaces with <redacted>")


class Publish(_Model):
    """What estimate and alert records may say about small groups of people."""

    min_cell: int = Field(
        10,
        ge=1,
        description="a group's cell (its trials in one part) is published with its estimate, counts and interval only when it "
        "counts at least this many trials; smaller cells are marked suppressed (verdicts still use the real counts)",
    )


class MetricEntry(_Model):
    """One property of a spec with several (`metrics:`): its own metric and estimator, alerts and estimates, under the
    monitor name `<monitor>.<name>`; input, trial and variables are the spec's."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]
    metric: Metric
    estimator: Estimator | None = Field(None, description="default: the spec's estimator section, else the defaults")


class Spec(_Model):
    """A monitor: input schema, trial lifecycle, per-trial variables, the metric, the estimator and the cadence."""

    monitor: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    description: str = ""
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
        if self.estimator.verdict != "point":
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
        if self.metric.type == "disparate_impact" and self.estimator.verdict == "anytime":
            raise ValueError("disparate_impact supports point and confident verdicts")
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
        return self
