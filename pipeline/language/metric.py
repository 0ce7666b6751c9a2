"""The fairness property of a spec: which rate or mean must be equal across groups, its threshold and ELF constraints."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from fairstream.language.fields import Duration, Name, SpecModel
from fairstream.records.timefmt import format_duration

MetricType = Literal[
    "demographic_parity",
    "conditional_statistical_parity",
    "equal_opportunity",
    "equalized_odds",
    "predictive_parity",
    "disparate_impact",
    "delayed_impact",
    "benefit_rate",
    "scoring_rate",
]
OVERALL_REFUSED = {
    "delayed_impact": "compares mean outcomes",
    "benefit_rate": "compares supply over demand",
    "conditional_statistical_parity": "standardizes its strata over groups compared in pairs",
}
"""Metrics `compare: overall` does not take, and why."""
WEIGHTED_RATES = ("demographic_parity", "disparate_impact", "equal_opportunity", "equalized_odds", "predictive_parity")
"""The metrics whose trials may carry weights (`metric.weight`)."""
RATIO_METRICS = frozenset({"disparate_impact"})
"""Metrics whose verdict bounds the ratio min / max of the group rates from below, not their gap max − min from above."""


def tests_ratio(metric: str) -> bool:
    """Whether `metric`'s verdict is on the ratio between groups (see `RATIO_METRICS`)."""
    return metric in RATIO_METRICS


class Baseline(SpecModel):
    """A constraint's τ taken, per group, from the group's own mean outcome over the first `baseline` of the run."""

    baseline: Duration = Field(description="how long the baseline lasts from the first evaluation (e.g. the previous model's period)")


class Constraint(SpecModel):
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


class PartlySeenLabel(SpecModel):
    """A label seen only for some trials (repayment only for approved loans): the boolean `observed_when` says whose."""

    variable: str = Field(description="boolean variable: the true outcome, where it is seen")
    observed_when: str = Field(description="boolean variable: true for the trials whose label is seen (e.g. approved)")


class Metric(SpecModel):
    """The fairness property: which conditional rate must be equal across groups, and how far apart it may be."""

    type: MetricType = Field(description="the fairness property: which conditional rate (or mean) must agree across groups")
    group: str | list[str] = Field(description="variable naming the trial's group, or several for intersectional groups (values joined by ' & ')")
    prediction: str | None = Field(None, description="boolean variable: the decision (e.g. high risk, hired); all rate metrics")
    label: str | PartlySeenLabel | None = Field(
        None,
        description="boolean variable: the true outcome (equal_opportunity, equalized_odds, predictive_parity); or "
        "{variable, observed_when} when it is seen only for some trials: each group's rate is then bounded (Manski) over "
        "what the unseen labels could be, and judged only where the bounds decide",
    )
    propensity: str | None = Field(
        None,
        description="numeric variable: each trial's probability, logged by the decision maker, that its label is seen "
        "(of approving, when repayment is seen only for approved loans); with a partly seen label it adds an "
        "inverse-propensity-weighted estimate of each rate with an interval, and the verdict rests on it",
    )
    weight: str | None = Field(
        None,
        description="numeric variable: each trial's weight (a survey or sampling weight, fairlearn's sample_weight): every "
        "rate is Σ weight·hit / Σ weight, its evidence floor and intervals count Kish's effective trials (Σw)²/Σw²; a "
        "trial whose weight is missing, negative or not finite is incomplete; point and confident verdicts",
    )
    condition: str | None = Field(None, description="variable whose values are the strata (conditional_statistical_parity)")
    given: str | None = Field(
        None,
        description="boolean variable: count only the trials where it is true, so each rate is conditional on it (offer rate "
        "given interviewed: one stage of a funnel); the part is named `<rate>[given <variable>]`",
    )
    outcome: str | None = Field(None, description="numeric variable observed later (delayed_impact): its mean per group is compared")
    score: str | None = Field(
        None, description="numeric variable: the score a tool gives (scoring_rate: the share of each group scoring above the median is compared)"
    )
    median: float | None = Field(
        None,
        description="scoring_rate: the score above which a trial counts, e.g. the median of the last audit period; omitted: the "
        "median of every score counted so far, recomputed at each evaluation (each estimate states the one it used)",
    )
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
    compare: Literal["pairs", "overall"] = Field(
        "pairs",
        description="pairs: the groups with each other (fairlearn's method='between_groups'); overall: each group with the "
        "part's overall rate over every group counted (method='to_overall'), published as the part's overall, the pair "
        "then naming a group and (overall); point verdicts, and confident ones on a gap",
    )
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
        if self.type == "scoring_rate" and self.score is None:
            raise ValueError("scoring_rate needs score: the numeric variable holding each trial's score")
        if self.type != "scoring_rate" and (self.score is not None or self.median is not None):
            raise ValueError(f"score and median belong to scoring_rate; {self.type} takes neither")
        if self.type not in ("delayed_impact", "benefit_rate", "scoring_rate") and self.prediction is None:
            raise ValueError(f"{self.type} needs prediction: the boolean variable holding the decision")
        if self.type in ("equal_opportunity", "equalized_odds", "predictive_parity") and self.label is None:
            raise ValueError(f"{self.type} needs label: the variable holding the true outcome")
        if self.type == "conditional_statistical_parity" and self.condition is None:
            raise ValueError("conditional_statistical_parity needs condition: the variable holding the stratum")
        if self.propensity is not None and not isinstance(self.label, PartlySeenLabel):
            raise ValueError("propensity weighs the trials whose label is seen: give label as {variable, observed_when}")
        if self.given is not None and self.type in ("delayed_impact", "benefit_rate"):
            raise ValueError(f"given conditions a rate; {self.type} compares means (filter its outcome with an expression instead)")
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
        if self.weight is not None and self.type not in WEIGHTED_RATES:
            raise ValueError(f"weight weighs the trials of a rate of events; {self.type} takes none (these do: {', '.join(WEIGHTED_RATES)})")
        if self.weight is not None and isinstance(self.label, PartlySeenLabel):
            raise ValueError("weight and a label seen only for some trials (weighted by propensity) cannot be combined")
        if self.compare == "overall" and self.pairs:
            raise ValueError("compare: overall judges each group against the overall rate; pairs list pairs of groups: give one of them")
        if self.compare == "overall" and self.type in OVERALL_REFUSED:
            raise ValueError(f"compare: overall takes a rate of events; {self.type} {OVERALL_REFUSED[self.type]}")
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


def label_variable(metric: Metric) -> str | None:
    """The variable holding a metric's true outcome, however the label is given."""
    return metric.label.variable if isinstance(metric.label, PartlySeenLabel) else metric.label
