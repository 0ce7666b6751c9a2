"""How the proxy groups' estimates hold on calibrated streams: the coverage of each group's interval (at one look, and
at every look for the anytime sequences), the verdicts' false alarms at the threshold, the weighted rates' shrunk gap
beside the moments' and the truth, and whether the calibration-only bounds hold (pure, seeded)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairstream.estimators.means import normal_width, sequence_width
from fairstream.estimators.proxy import ProxyLayout, proxy_rates
from fairstream.estimators.proxy_bounds import proxy_bounds
from fairstream.verdicts.judge import VerdictRule
from fairstream.verdicts.proxy import proxy_part

GROUPS = ("a", "b", "c")
RATES = (0.60, 0.45, 0.52)
"""Three groups' approval rates: a gap of 0.15 between a and b."""
AT_THRESHOLD = (0.50, 0.40, 0.45)
"""Rates whose largest gap is exactly ε = 0.1: the hardest fair stream."""
THRESHOLD = 0.1


def calibrated(seed: int, trials: int, rates=RATES, concentration: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """Probability vectors drawn from a Dirichlet, each trial's true group drawn from its own vector, its approval from
    its group's rate alone."""
    rng = np.random.default_rng(seed)
    probabilities = rng.dirichlet([concentration] * len(GROUPS), size=trials)
    group = (rng.random(trials)[:, None] > np.cumsum(probabilities, axis=1)).sum(axis=1)
    return probabilities, rng.random(trials) < np.asarray(rates)[group]


@dataclass(frozen=True)
class ProxyStudy:
    """Shares over the runs: per group, an interval that missed its rate (fixed-time at the end; anytime at any look);
    streams with a false alarm at the threshold; bounds that missed; and the mean gaps of a and b."""

    runs: int
    trials: int
    missed_fixed: tuple[float, ...]
    missed_anytime: tuple[float, ...]
    alarms_confident: float
    alarms_anytime: float
    bounds_missed: float
    weighted_gap: float
    moment_gap: float
    true_gap: float


def study(runs: int, trials: int, alpha: float = 0.05, looks: int = 10, seed: int = 0) -> ProxyStudy:
    """Measure `runs` calibrated streams of `trials`, the anytime ones read at `looks` evenly spaced looks."""
    layout = ProxyLayout(GROUPS)
    every = np.ones(trials, bool)
    fixed, anytime = np.zeros(len(GROUPS)), np.zeros(len(GROUPS))
    confident_alarms = anytime_alarms = bounds_missed = 0
    weighted, moments = [], []
    marks = [trials * (look + 1) // looks for look in range(looks)]
    for run in range(runs):
        probabilities, approved = calibrated(seed + run, trials)
        ever = np.zeros(len(GROUPS), bool)
        for mark in marks:
            estimated = proxy_rates(layout, layout.sums(probabilities[:mark], approved[:mark], every[:mark]), mark)
            if estimated is not None:
                errors = np.abs(estimated.rates - RATES)
                ever |= errors > sequence_width(alpha, mark) * np.sqrt(np.diag(estimated.covariance))
        anytime += ever
        sums = layout.sums(probabilities, approved, every)
        estimated = proxy_rates(layout, sums, trials)
        fixed += np.abs(estimated.rates - RATES) > normal_width(alpha) * np.sqrt(np.diag(estimated.covariance))
        weighted.append(estimated.weighted[0] - estimated.weighted[1])
        moments.append(estimated.rates[0] - estimated.rates[1])
        bounds = proxy_bounds(layout, sums, alpha)
        bounds_missed += any(not bounds[group][0] <= rate <= bounds[group][1] for group, rate in zip(GROUPS, RATES))
        confident_alarms += _alarm("confident", seed + runs + run, trials, [trials], alpha, layout)
        anytime_alarms += _alarm("anytime", seed + runs + run, trials, marks, alpha, layout)
    return ProxyStudy(
        runs, trials, tuple(fixed / runs), tuple(anytime / runs), confident_alarms / runs, anytime_alarms / runs, bounds_missed / runs,
        float(np.mean(weighted)), float(np.mean(moments)), RATES[0] - RATES[1],
    )  # fmt: skip


def _alarm(mode: str, seed: int, trials: int, marks: list[int], alpha: float, layout: ProxyLayout) -> bool:
    """Whether a fair stream at the threshold raised a violation at any of its looks (α split over the three pairs)."""
    probabilities, approved = calibrated(seed, trials, AT_THRESHOLD)
    rule = VerdictRule(mode=mode, threshold=THRESHOLD, alpha=alpha)  # type: ignore[arg-type]
    every = np.ones(trials, bool)
    for mark in marks:
        numbers = [*layout.sums(probabilities[:mark], approved[:mark], every[:mark]), mark]
        if proxy_part(numbers, layout, rule, level=lambda _pair: alpha / 3, min_trials=100)["violated"]:
            return True
    return False
