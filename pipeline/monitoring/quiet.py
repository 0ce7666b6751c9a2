"""Judging an evaluation without building its records (pure): under `publish.every`, most evaluations of point
verdicts on rates turn nothing and write nothing, so their verdicts are reached from the counts alone, and the full
evaluation runs only where a verdict turns, a part's standing changes or the cadence writes an estimate."""

from __future__ import annotations

from typing import Any

from fairstream.estimators.priors import part_estimator
from fairstream.estimators.rate import Rate
from fairstream.monitoring.cadence import Standing
from fairstream.monitoring.cells import RateCells, ScoreCells
from fairstream.monitoring.config import MonitorConfig
from fairstream.monitoring.counts import Counts
from fairstream.monitoring.windows import Cumulative, Sliding
from fairstream.trials.outcomes import UNLABELED, hidden
from fairstream.verdicts.alerts import AlertTracker, part_status
from fairstream.verdicts.judge import point_outcome, widest_pair
from fairstream.verdicts.partly_seen import selective_groups
from fairstream.verdicts.parts import point_estimates


def judged_rates(counts: Counts, part: str) -> tuple[dict[str, Rate], set[str], dict[str, Rate]]:
    """A part's rates as judged: without the groups whose unlabeled trials make their true- or false-positive rate
    unknowable (withheld, see `selective_groups`), those groups, and the part's unlabeled counts."""
    rates = counts.rates[part]
    unlabeled = counts.rates.get(UNLABELED + (part[part.index("[given ") :] if "[given " in part else ""), {})
    selective = selective_groups(unlabeled, rates) if part.startswith(("true_positive_rate", "false_positive_rate")) else set()
    return ({group: rate for group, rate in rates.items() if group not in selective} if selective else rates), selective, unlabeled


def judges_quietly(config: MonitorConfig) -> bool:
    """Whether a monitor's evaluations can be judged quietly: a publishing cadence, point verdicts on plain rates over
    a cumulative or sliding window (nothing but the next evaluation changes the counts an evaluation saw), and no
    evidence that every evaluation must feed (anytime tests, change detectors, constraints, strata standardized)."""
    return (
        config.publishing.every is not None
        and config.rule.mode == "point"
        and not config.rule.overall
        and type(config.counting.cells) in (RateCells, ScoreCells)
        and isinstance(config.counting.window, Cumulative | Sliding)
        and config.judging.gap_verdict
        and not config.judging.constraints
        and config.judging.detection is None
        and not config.estimation.partly_seen
        and config.metric != "conditional_statistical_parity"
        and not config.counting.events
        and not config.triggers
    )


Estimated = dict[tuple[Any, ...], Any]
"""What one evaluation of shared counts has worked out, for the other monitors of those counts: a part's judged rates
(by part), its point estimates and raw rates (by part, prior, confidence and the groups at the evidence floor) and
their widest pair (by those and the rule's ratio and pairs). Each monitor judges them by its own threshold."""


def quiet_standing(config: MonitorConfig, counts: Counts, tracker: AlertTracker, prior: float | None, estimated: Estimated | None = None) -> Standing | None:
    """Each part's standing at this evaluation (as `standing_of` reads it from the records), or None where some
    part's verdict turns (a violation starts or ends): then the evaluation is judged in full. `estimated` holds what
    other monitors of the same counts have estimated at this evaluation."""
    standing: Standing = {}
    min_cell = config.publishing.min_cell
    found: Estimated = {} if estimated is None else estimated
    for part in sorted(config.counting.cells.table(counts)):
        if hidden(part):
            continue
        part_prior, confidence = part_estimator(config.estimation.part_estimators, part, prior, config.estimation.confidence, counts.totals)
        if (part,) not in found:
            found[(part,)] = judged_rates(counts, part)[0]
        rates = found[(part,)]
        floor = max(config.judging.min_trials, 1)
        estimated_as = (part, part_prior, confidence, tuple(group for group, rate in rates.items() if rate.trials >= floor))
        if estimated_as not in found:
            found[estimated_as] = point_estimates(rates, prior=part_prior, confidence=confidence, min_trials=floor)
        widest_as = (*estimated_as, config.rule.ratio, config.rule.pairs)
        if widest_as not in found:
            found[widest_as] = widest_pair(config.rule, *found[estimated_as])
        widest = found[widest_as]
        state = tracker.violated.get(part, False)
        if widest is not None:
            violated_now, clear = point_outcome(config.rule, widest)
            if clear if state else violated_now:
                return None
        violated = state if widest is not None or part in tracker.violated else None
        pair: tuple[str, ...] = ()
        if violated and widest is not None:
            shown, named = counts.rates[part], widest["pair"]
            pair = tuple(sorted(named)) if any(shown[group].trials < min_cell for group in named) else named
        standing[part] = (part_status(True, violated, None), pair, ())
    return standing
