"""The monitor's settings from a checked spec: the metric's cells and window chosen once, the estimation, the judging
and the publishing settings (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairstream.compiler.checks import constraint_rule, declared_parts
from fairstream.language.expressions import Expression
from fairstream.language.metric import PartlySeenLabel, tests_ratio
from fairstream.language.models import Spec
from fairstream.monitoring.cells import Cells, ProxyCells, RateCells, ScoreCells, SumCells, WeightedCells
from fairstream.monitoring.config import Counting, Estimation, Judging, MonitorConfig, Publishing
from fairstream.monitoring.windows import Cumulative, Periodic, Sliding, Window
from fairstream.trials.outcomes import SlotOutcomes
from fairstream.verdicts.budget import declared_pairs
from fairstream.verdicts.changes import Detection
from fairstream.verdicts.judge import VerdictRule

if TYPE_CHECKING:
    from fairstream.estimators.proxy import ProxyLayout


def monitor_config(
    spec: Spec,
    prior: float | Expression,
    part_estimators: dict[str, tuple[float | Expression | None, float | None]],
    slot_outcomes: SlotOutcomes | None,
    proxy: ProxyLayout | None = None,
) -> MonitorConfig:
    """The settings of the spec's monitor (the spec's sha256 is set where its text is known)."""
    metric, estimator = spec.metric, spec.estimator
    listed = metric.groups if isinstance(metric.groups, list) else None
    return MonitorConfig(
        name=spec.monitor,
        metric=metric.type,
        rule=VerdictRule(
            mode="point" if estimator.verdict == "change" else estimator.verdict,  # change verdicts judge the gap as point ones
            threshold=metric.threshold if metric.threshold is not None else 1.0,  # without a threshold no gap is judged (gap_verdict)
            alpha=estimator.alpha,
            hysteresis=estimator.hysteresis,
            ratio=tests_ratio(metric.type),
            pairs=tuple(tuple(pair) for pair in metric.pairs) if metric.pairs else None,
            overall=metric.compare == "overall",
        ),
        counting=Counting(cells(spec, proxy), window(spec), max_groups=metric.max_groups, listed_groups=None if listed is None else tuple(listed)),
        estimation=Estimation(
            prior=prior,
            confidence=estimator.confidence,
            interval=estimator.interval,
            bounds=estimator.bounds,
            outcome_range=estimator.outcome_range,
            part_estimators=part_estimators,
            median=metric.median,
            partly_seen=isinstance(metric.label, PartlySeenLabel),
            weighted=metric.propensity is not None,
            sample_weights=metric.weight is not None,
        ),
        judging=Judging(
            min_trials=spec.evidence_floor,
            gap_verdict=metric.threshold is not None,
            constraints=tuple(constraint_rule(constraint, estimator) for constraint in metric.constraints),
            family=estimator.family,
            declared_parts=declared_parts(metric),
            declared_pairs=declared_pairs(listed, metric.pairs),
            declared_groups=None if listed is None else len(set(listed)),
            label_horizon=spec.trial.close_after,
            detection=detection(spec, listed),
        ),
        publishing=Publishing(min_cell=spec.publish.min_cell, every=spec.publish.every),
        tick=spec.evaluate.tick,
        max_ticks=spec.evaluate.max_ticks,
        on_close=spec.evaluate.on == "close",
        reporters=spec.buckets,
        slot_outcomes=slot_outcomes,
        numbered=spec.input.numbered,
    )


def cells(spec: Spec, proxy: ProxyLayout | None = None) -> Cells:
    """Moment sums where the groups are probabilities, sums for metrics that compare numbers (mean outcomes, benefit
    rates, partly seen labels), scores for a scoring rate against its running median, else hits and trials."""
    metric = spec.metric
    if proxy is not None:
        return ProxyCells(layout=proxy)
    if metric.type in ("delayed_impact", "benefit_rate") or isinstance(metric.label, PartlySeenLabel):
        return SumCells(discount=metric.discount, recency=metric.recency)
    if metric.type == "scoring_rate" and metric.median is None:
        return ScoreCells()
    if metric.weight is not None:
        return WeightedCells()
    return RateCells()


def detection(spec: Spec, listed: list[str] | None) -> Detection | None:
    """Change verdicts' settings: the shift (default ε), the run length, and the detectors the spec declares."""
    estimator, metric = spec.estimator, spec.metric
    if estimator.verdict != "change":
        return None
    parts, pairs = declared_parts(metric), declared_pairs(listed, metric.pairs)
    declared = parts * pairs if parts is not None and pairs is not None else None
    shift = estimator.shift if estimator.shift is not None else metric.threshold
    assert shift is not None  # the spec's model requires one of them
    return Detection(shift, estimator.arl, declared)


def window(spec: Spec) -> Window:
    """The spec's window: every closed trial, the last `length`, or the current period of `length`."""
    chosen = spec.window
    if chosen.kind == "sliding":
        return Sliding(chosen.length or 0, chosen.by)
    if chosen.kind == "periodic":
        return Periodic(chosen.length or 0, chosen.by)
    return Cumulative()
