"""False alarms and detection delay of delayed-impact verdicts read after every trial: the anytime-valid verdicts
against fixed-time ones read as often, as a dashboard would.

Outcomes are drawn from Beta distributions on [0, 1] with the given means, one trial per group per step.

- The gap between two groups' means: the anytime verdict is the monitor's test by betting (`GapBet`, the k-th
  outcome of one group paired with the k-th of the other) rejecting "gap ≤ ε" at α; the fixed-time verdict is the
  two-sample t test of "gap ≤ ε" at α/2 per direction. With the gap exactly ε, the hardest fair case, any alarm is
  false; on unfair streams the delay is the number of steps to the first alarm.
- One group's constraint E[outcome] ≥ τ: the anytime certificate is the betting confidence sequence's lower bound
  (`estimators.sequence`) at 1 − δ, the fixed-time one the one-sided Student t bound. With the mean exactly τ, any
  certificate is false.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from fairstream.estimators import sequence
from fairstream.estimators.betting import bet_cap, log_wealth_paths

SPREAD = 4.0
"""Beta(μ·SPREAD, (1 − μ)·SPREAD): outcomes spread over the whole of [0, 1] (standard deviation about 0.2 at μ = 0.6)."""


@dataclass(frozen=True)
class FirstAlarms:
    """Per run, the first step (1-based) at which each verdict alarmed (or certified), 0 where it never did."""

    anytime: np.ndarray
    fixed: np.ndarray

    def rates(self) -> tuple[float, float]:
        """Share of runs where it happened at all: (anytime, fixed-time)."""
        return float((self.anytime > 0).mean()), float((self.fixed > 0).mean())

    def median_delays(self) -> tuple[float | None, float | None]:
        """Median first step over the runs where it happened: (anytime, fixed-time)."""
        return _median(self.anytime), _median(self.fixed)


def _median(first: np.ndarray) -> float | None:
    found = first[first > 0]
    return float(np.median(found)) if found.size else None


def _first(flags: np.ndarray) -> np.ndarray:
    """Per row, the 1-based index of the first True, 0 where there is none."""
    return np.where(flags.any(axis=1), flags.argmax(axis=1) + 1, 0)


def _draw(rng: np.random.Generator, mean: float, runs: int, steps: int) -> np.ndarray:
    return rng.beta(mean * SPREAD, (1 - mean) * SPREAD, size=(runs, steps))


def gap_alarms(mean_a: float, mean_b: float, *, epsilon: float, alpha: float, runs: int, steps: int, seed: int = 0) -> FirstAlarms:
    """Both gap verdicts over the same seeded streams, checked after every step."""
    rng = np.random.default_rng(seed)
    a, b = _draw(rng, mean_a, runs, steps), _draw(rng, mean_b, runs, steps)
    wealth = log_wealth_paths(np.stack([a - b - epsilon, b - a - epsilon]), cap=bet_cap(1 + epsilon))
    anytime = _first((wealth >= math.log(2 / alpha)).any(axis=0))
    n = np.arange(1, steps + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        means_a, means_b = np.cumsum(a, axis=1) / n, np.cumsum(b, axis=1) / n
        variance = (np.cumsum(a**2, axis=1) - n * means_a**2 + np.cumsum(b**2, axis=1) - n * means_b**2) / (n - 1)
        margin = stats.t.ppf(1 - alpha / 2, np.maximum(2 * n - 2, 1)) * np.sqrt(np.maximum(variance, 0.0) / n)
        fixed = _first((n >= 2) & (np.abs(means_a - means_b) - margin > epsilon))
    return FirstAlarms(anytime, fixed)


def false_certificates(tau: float, *, delta: float, runs: int, steps: int, seed: int = 0) -> FirstAlarms:
    """How often a group whose mean outcome is exactly τ is certified E[outcome] ≥ τ at some step: the confidence
    sequence's lower bound against the one-sided t bound, both at 1 − δ and read after every step."""
    rng = np.random.default_rng(seed)
    outcomes = _draw(rng, tau, runs, steps)
    grid = sequence.means()
    state = sequence.start((runs,))
    certified = np.zeros((runs, steps), dtype=bool)
    for index in range(steps):
        sequence.step(state, outcomes[:, index], grid)
        certified[:, index] = sequence.lower(state, delta, grid) >= tau
    n = np.arange(1, steps + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.cumsum(outcomes, axis=1) / n
        deviation = np.sqrt(np.maximum(np.cumsum(outcomes**2, axis=1) - n * means**2, 0.0) / (n - 1) / n)
        lower = means - stats.t.ppf(1 - delta, np.maximum(n - 1, 1)) * deviation
    return FirstAlarms(_first(certified), _first((n >= 2) & (lower >= tau)))


def oracle_trials(mean_a: float, mean_b: float, *, epsilon: float, alpha: float, power: float = 0.8) -> float:
    """Trials per group a fixed-sample two-sided test of "gap ≤ ε" (α/2 a side) needs for `power` when it knows the
    means and the spread of the Beta outcomes: (z_{1−α/2} + z_power)² (σ_a² + σ_b²) / (|μ_a − μ_b| − ε)².

    >>> round(oracle_trials(0.8, 0.55, epsilon=0.1, alpha=0.05))
    28
    """
    variance = sum(mean * (1 - mean) / (SPREAD + 1) for mean in (mean_a, mean_b))
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return float(z**2 * variance / (abs(mean_a - mean_b) - epsilon) ** 2)
