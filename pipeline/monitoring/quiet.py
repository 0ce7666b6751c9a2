"""Judging an evaluation without building its records (pure): under `publish.every`, most evaluations of point
verdicts on rates turn nothing and write nothing, so their verdicts are reached from the counts alone, and the full
evaluation runs only where a verdict turns, a part's standing changes or the cadence writes an estimate."""

from __future__ import annotations

from collections.abc import Callable

from fairstream.estimators.priors import part_estimator
from fairstream.estimators.rate import Rate
from fairstream.monitoring.cadence import Standing
from fairstream.monitoring.cells import RateCells, ScoreCells
from fairstream.monitoring.config import MonitorConfig
from fairstream.monitoring.counts import Counts
from fairstream.trials.outcomes import hidden
from fairstream.verdicts.alerts import AlertTracker, part_status
from fairstream.verdicts.judge import judge
from fairstream.verdicts.parts import point_estimates

Estimates = tuple[dict[str, float], dict[str, float]]
"""A part's MAP estimates and raw rates per group at the evidence floor (see `point_estimates`)."""
JudgedRates = Callable[[Counts, str], tuple[dict[str, Rate], set[str], dict[str, Rate]]]
"""(counts, part) → the part's rates as judged, the groups withheld, its unlabeled counts (see `Evaluation._judged_rates`)."""


def judges_quietly(config: MonitorConfig) -> bool:
    """Whether a monitor's evaluations can be judged quietly: a publishing cadence, point verdicts on plain rates over
    a cumulative or sliding window (nothing but the next evaluation changes the counts an evaluation saw), and no
    evidence that every evaluation must feed (anytime tests, change detectors, constraints, strata standardized)."""
    return (
        config.publishing.every is not None
        and config.rule.mode == "point"
        and type(config.counting.cells) in (RateCells, ScoreCells)
        and config.counting.window.__class__.__name__ in ("Cumulative", "Sliding")
        and config.judging.gap_verdict
        and not config.judging.constraints
        and config.judging.detection is None
        and not config.estimation.partly_seen
        and config.metric != "conditional_statistical_parity"
    )


def quiet_standing(
    config: MonitorConfig, counts: Counts, tracker: AlertTracker, prior: float | None, judged_rates: JudgedRates, shared: dict[tuple, Estimates]
) -> Standing | None:
    """Each part's standing at this evaluation (as `standing_of` reads it from the records), or None where some
    part's verdict turns (a violation starts or ends): then the evaluation is judged in full. `shared`: the estimates
    of this evaluation's counts already made, by part, prior, κ and evidence floor (monitors sharing counts make them once)."""
    standing: Standing = {}
    min_cell = config.publishing.min_cell
    for part in sorted(config.counting.cells.table(counts)):
        if hidden(part):
            continue
        part_prior, confidence = part_estimator(config.estimation.part_estimators, part, prior, config.estimation.confidence, counts.totals)
        made = (part, part_prior, confidence, config.judging.min_trials)
        estimates = shared.get(made)
        if estimates is None:
            estimates = shared[made] = point_estimates(judged_rates(counts, part)[0], prior=part_prior, confidence=confidence, min_trials=config.judging.min_trials)
        verdict = judge(config.rule, estimates[0], raw=estimates[1])
        state = tracker.violated.get(part, False)
        if verdict.clear if state else verdict.violated:
            return None
        violated = state if verdict.violated is not None or part in tracker.violated else None
        pair: tuple[str, ...] = ()
        if violated and verdict.pair is not None:
            shown = counts.rates[part]
            pair = tuple(sorted(verdict.pair)) if any(shown[group].trials < min_cell for group in verdict.pair) else verdict.pair
        standing[part] = (part_status(True, violated, None), pair, ())
    return standing
