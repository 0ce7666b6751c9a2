"""The predictable plug-in empirical-Bernstein confidence sequence (`RateSequence`): its bounds hold at every look on
at least 1 − α of simulated runs, narrow as outcomes arrive, and match the closed form on a hand-made stream."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairstream.estimators.sequence import RateSequence

ALPHA = 0.05


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5])
def test_the_bounds_hold_at_every_look_on_at_least_one_minus_alpha_of_runs(p):
    rng = np.random.default_rng(7)
    missed = 0
    for _ in range(300):
        sequence = RateSequence()
        for outcome in (rng.random(1500) < p).astype(float):
            sequence.update(float(outcome))
            low, high = sequence.bounds(ALPHA)
            if not low <= p <= high:
                missed += 1
                break
    assert missed / 300 <= ALPHA


def test_the_band_narrows_as_outcomes_arrive():
    rng = np.random.default_rng(8)
    sequence, widths = RateSequence(), []
    for outcome in (rng.random(4000) < 0.4).astype(float):
        sequence.update(float(outcome))
        low, high = sequence.bounds(ALPHA)
        widths.append(high - low)
    assert widths[99] > widths[999] > widths[3999] and widths[3999] < 0.08
    assert sequence.bounds(ALPHA)[0] < 0.4 < sequence.bounds(ALPHA)[1]


def test_three_outcomes_by_the_closed_form():
    """λ_i = min(√(2 ln 40 / (σ̂²_{i−1} i ln(1 + i))), 1/2), v_i = 4(x_i − μ̂_{i−1})², ψ(λ) = (−ln(1 − λ) − λ)/4, by hand."""
    outcomes, lambdas, penalties = [1.0, 0.0, 1.0], [], []
    total, spread = 0.0, 0.25
    for i, x in enumerate(outcomes, 1):
        mean, variance = (0.5 + total) / i, spread / i
        lam = min(math.sqrt(2 * math.log(2 / 0.05) / (variance * i * math.log(1 + i))), 0.5)
        lambdas.append(lam)
        penalties.append(4 * (x - mean) ** 2 * (-math.log(1 - lam) - lam) / 4)
        total += x
        spread += (x - (0.5 + total) / (i + 1)) ** 2
    centre = sum(lam * x for lam, x in zip(lambdas, outcomes, strict=True)) / sum(lambdas)
    margin = (math.log(2 / ALPHA) + sum(penalties)) / sum(lambdas)
    sequence = RateSequence()
    for x in outcomes:
        sequence.update(x)
    assert sequence.bounds(ALPHA) == pytest.approx((max(0.0, centre - margin), min(1.0, centre + margin)))
