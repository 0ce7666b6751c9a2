"""How a spec estimates and judges: the MAP prior and κ, the verdict mode, its error budget and intervals, the cadence and window."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from fairstream.language.fields import Duration, SpecModel
from fairstream.records.timefmt import DAY


class PartEstimator(SpecModel):
    """A prior and κ of one conditional rate, where it differs from the estimator's (RTLola's `(or: γ)` per probability)."""

    prior: float | str | None = Field(None, description="prior mean γ in [0, 1], or an expression over aggregates; default: the estimator's")
    confidence: float | None = Field(None, ge=0, description="κ in pseudo-trials; default: the estimator's")

    @model_validator(mode="after")
    def _prior_in_range(self) -> PartEstimator:
        if isinstance(self.prior, float) and not 0 <= self.prior <= 1:
            raise ValueError(f"prior must be in [0, 1]; got {self.prior}")
        return self


DEFAULT_ARL = 1_000_000
"""Change verdicts' default average run length to a false alarm: about one in a hundred streams of 10,000 trials."""
MIN_ALPHA = 1e-12
"""The smallest error level a spec may ask for."""


class Estimator(SpecModel):
    """MAP estimate (S_AB + prior·κ)/(S_B + κ) per group, and how a verdict is reached from it."""

    prior: float | str = Field(0.5, description="prior mean γ in [0, 1], or an expression over aggregates")
    confidence: float = Field(0.0, ge=0, description="κ: weight of the prior in pseudo-trials; 0 gives the plain ratio")
    verdict: Literal["point", "confident", "anytime", "change"] = Field(
        "point",
        description="point: the estimated gap exceeds the threshold; confident: the gap's 1−α interval lies above it; "
        "anytime: a test by betting rejects a gap ≤ threshold at level α, valid however often it is checked; change: "
        "a change detector per pair of groups says when a gap moved by shift or more (fairness.changed), besides point verdicts",
    )
    shift: float | None = Field(
        None, gt=0, description="change verdicts: the smallest change of a gap worth finding (default: the metric's threshold)"
    )
    arl: float = Field(
        DEFAULT_ARL,
        ge=100,
        description="change verdicts: the average number of trials between false alarms on a stream that never changes, "
        "restarts included, over every part and pair together",
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


class Evaluate(SpecModel):
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


class Window(SpecModel):
    """Which closed trials an evaluation counts: all so far, those of the last `length`, or those of the current period."""

    kind: Literal["cumulative", "sliding", "periodic"] = Field(
        "cumulative", description="cumulative: every closed trial counts; sliding: those of the last length; periodic: those since the period began"
    )
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
