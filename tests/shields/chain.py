"""A vectorized simulation of the one-group energy shield: many runs side by side, drawing raw decisions and flips."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairstream.shields import Energy, Target


@dataclass(frozen=True)
class Runs:
    """Per run: F_T, the average interference, whether S was violated on [τ, T] and how often."""

    fairness: np.ndarray
    interference: np.ndarray
    violated: np.ndarray
    violations: np.ndarray


def simulate(energy: Energy, p: float, target: Target, steps: int, runs: int, rng: np.random.Generator) -> Runs:
    """Each step draws the raw decisions X ~ Bernoulli(p) and u ~ U[0, 1), then applies the shield's rule with F_0 = c."""
    s_lo, s_hi = target.running
    ones = np.zeros(runs)
    flips = np.zeros(runs)
    violated = np.zeros(runs, dtype=bool)
    violations = np.zeros(runs)
    for t in range(steps):
        raw = (rng.random(runs) < p).astype(float)
        u = rng.random(runs)
        fairness = ones / t if t else np.full(runs, energy.pivot)
        favoured = np.where(fairness < energy.pivot, 1.0, 0.0)
        flip = (raw != favoured) & (u < energy(fairness)) & (fairness != energy.pivot)
        ones += np.where(flip, 1 - raw, raw)
        flips += flip
        if t + 1 >= target.burn_in:
            outside = (ones / (t + 1) < s_lo) | (ones / (t + 1) > s_hi)
            violated |= outside
            violations += outside
    return Runs(ones / steps, flips / steps, violated, violations)
