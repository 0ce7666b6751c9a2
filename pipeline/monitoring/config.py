"""A monitor's settings, compiled from its spec and grouped by concern: how it counts, estimates, judges and publishes (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from fairstream.language.expressions import Expression
from fairstream.monitoring.cells import Cells, ProxyCells, ScoreCells
from fairstream.monitoring.triggers import TriggerPlan
from fairstream.monitoring.windows import Cumulative, Window
from fairstream.trials.outcomes import SlotOutcomes
from fairstream.trials.panes import WindowPlan
from fairstream.verdicts.budget import Family, MonitorBudget
from fairstream.verdicts.changes import Detection
from fairstream.verdicts.constraints import ConstraintRule
from fairstream.verdicts.judge import VerdictRule

if TYPE_CHECKING:
    from fairstream.estimators.proxy import ProxyLayout


@dataclass(frozen=True)
class Counting:
    """What the counts hold: the metric's cells, the window they cover, and the groups they track."""

    cells: Cells
    window: Window = field(default_factory=Cumulative)
    max_groups: int = 256
    """Groups a part tracks at most; the trials of further groups are counted, not estimated (see `TrackedGroups`)."""
    listed_groups: tuple[str, ...] | None = None
    """The spec's `metric.groups` where it lists them: one no trial carries is named with the values seen instead."""
    events: tuple[WindowPlan, ...] = ()
    """The spec's windows over raw events (`windows:`), summed where the events are read and slid at the merge."""
    open_trials: bool = False
    """Whether the open trials are counted (a trigger reads them): the reporters say how many trials opened in each tick."""

    @property
    def missing_events(self) -> dict[str, float | None]:
        """What a group a window has not seen reads as in a trigger: 0 events counted or summed, else nothing."""
        return {plan.name: 0 if plan.aggregate in ("count", "sum") else None for plan in self.events}


@dataclass(frozen=True)
class Estimation:
    """How each group's rate or mean is estimated and bounded."""

    prior: float | Expression
    confidence: float
    interval: str = "wilson"
    bounds: Literal["student_t", "hoeffding"] = "student_t"
    outcome_range: tuple[float, float] | None = None
    part_estimators: dict[str, tuple[float | Expression | None, float | None]] = field(default_factory=dict)
    """Per part (or part name before a stratum's brackets): its own prior mean and κ, None where the spec's hold."""
    median: float | None = None
    """A scoring rate's fixed cut (metric.median); None with a scoring rate: the running median of the scores counted."""
    partly_seen: bool = False
    """Whether the metric's label is seen only for some trials: its rates are bounded, or weighted by propensities."""
    weighted: bool = False
    """Whether partly seen labels come with propensities (an inverse-propensity-weighted estimate per group)."""
    sample_weights: bool = False
    """Whether each trial carries a weight (`metric.weight`): rates of weighted sums, judged on effective trials."""


@dataclass(frozen=True)
class Judging:
    """What the verdicts judge, and how the error budget is shared out."""

    min_trials: int = 1
    gap_verdict: bool = True
    """Whether the gap between groups is judged (delayed impact with constraints may leave the threshold out)."""
    constraints: tuple[ConstraintRule, ...] = ()
    """Delayed impact: ELF's per-group constraints, each its own part with one alert per group it cannot certify."""
    family: Family = "monitor"
    """Whether α covers every part of the monitor (split evenly) or each part has the whole α (see `MonitorBudget`)."""
    declared_parts: int | None = 1
    """Parts judged against the threshold, where the metric fixes them; None where the data does (strata)."""
    declared_pairs: int | None = None
    """Pairs of groups per part where the spec lists groups or pairs; None with `groups: all`."""
    declared_groups: int | None = None
    """Groups where the spec lists them: a constraint's δ is split evenly over them (else by the schedule)."""
    label_horizon: int | None = None
    """trial.close_after: under anytime verdicts the published rates count the trials opened at least this long ago."""
    detection: Detection | None = None
    """Change verdicts: what the detectors of each part's pairs look for (besides the gap's point verdict)."""


@dataclass(frozen=True)
class Publishing:
    """What the estimate records carry."""

    min_cell: int = 1
    """Cells with fewer trials are published suppressed (see `suppress_small_cells`); verdicts use every cell."""
    every: tuple[str, int] | None = None
    """`publish.every`: which evaluations write their estimate record (see `PublishCadence`); None: every one."""


@dataclass(frozen=True)
class MonitorConfig:
    """What the merge needs from the spec."""

    name: str
    metric: str
    rule: VerdictRule
    counting: Counting
    estimation: Estimation
    tick: int
    on_close: bool
    reporters: int
    """How many reporters a tick waits for: the trial buckets, or the input partitions where trials are kept as they are read."""
    judging: Judging = field(default_factory=Judging)
    publishing: Publishing = field(default_factory=Publishing)
    max_ticks: int = 1_000_000
    """The most evaluations one advance of the watermark may ask for (each writes an estimate, all held at once)."""
    slot_outcomes: SlotOutcomes | None = field(default=None, compare=False)
    """Turns the slot tuples buckets count closed trials by into cells (see `TickDelta.unsettled`)."""
    spec_sha256: str = ""
    """The sha256 of the spec's text, which every record names in its chain."""
    joins_job: bool = False
    """Whether its merged evidence joins the job's, across monitors (see `fairstream.verdicts.many_pairs.job`)."""
    numbered: bool = False
    """A plain table: event time is the row's number, so each record also says how many rows were read (`row`)."""
    triggers: tuple[TriggerPlan, ...] = ()
    """The spec's triggers, evaluated over the monitor's values at each evaluation (see `fairstream.monitoring.triggers`)."""

    @property
    def threshold(self) -> float:
        return self.rule.threshold

    @property
    def measures(self) -> bool:
        """Whether the metric compares sums of numbers (mean outcomes, benefit rates, partly seen rates) rather than
        plain rates of events."""
        return self.counting.cells.measures

    @property
    def bet_epsilon(self) -> float:
        """The threshold on the scale the betting tests see: rates as they are, mean outcomes rescaled to [0, 1]."""
        outcome_range = self.estimation.outcome_range
        if self.metric == "delayed_impact" and outcome_range is not None:
            return self.threshold / (outcome_range[1] - outcome_range[0])
        return self.threshold

    @property
    def proxy(self) -> ProxyLayout | None:
        """Where the groups are known only as probabilities: the groups and where each moment sits in a cell."""
        cells = self.counting.cells
        return cells.layout if isinstance(cells, ProxyCells) else None

    @property
    def opening_order(self) -> bool:
        """Whether closed trials reach the anytime tests in opening order, so the reporters say how far that order is
        final (groups known as probabilities take asymptotic confidence sequences from their sums instead)."""
        return self.rule.mode == "anytime" and self.proxy is None

    @property
    def merges_pairs(self) -> bool:
        """Whether every pair's anytime tests merge into one alarm (`fairness.violated_somewhere`): anytime verdicts on
        a gap or ratio that may compare more than one pair (over all parts)."""
        tests = (self.judging.declared_pairs or 2) * (self.judging.declared_parts or 2)
        return self.opening_order and self.judging.gap_verdict and tests > 1

    def budget(self) -> MonitorBudget:
        return MonitorBudget(self.rule.alpha, self.judging.family, self.judging.declared_parts, self.judging.declared_pairs)

    @property
    def running_median(self) -> bool:
        """A scoring rate against the median of the scores counted so far: trials are counted by their score."""
        return isinstance(self.counting.cells, ScoreCells)

    @property
    def needs_trials(self) -> bool:
        """Whether buckets must send closed trials one by one (verdict per trial, betting in close order, a window that
        selects trials by when they opened, scores counted one by one for a running median, or change detectors)."""
        return self.on_close or self.opening_order or self.counting.window.by == "opened" or self.running_median or self.judging.detection is not None

    def counts_like(self, other: MonitorConfig) -> bool:
        """Whether this monitor's counts stay equal to `other`'s when both take the same reports: the same cells, window,
        groups and cadence of evaluations, and no evidence whose shape depends on the verdict (anytime tests, change
        detectors, constraints' baselines)."""
        return not any(
            config.opening_order or config.judging.detection is not None or config.judging.constraints for config in (self, other)
        ) and (self.counting, self.tick, self.on_close, self.reporters, self.max_ticks, self.needs_trials) == (
            other.counting, other.tick, other.on_close, other.reporters, other.max_ticks, other.needs_trials,
        )  # fmt: skip
