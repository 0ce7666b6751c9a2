"""The betting confidence sequence for bounded means: its capital is the paper's formula computed by hand, its bounds
hold at every time at once on 1,000 simulated streams, and a fixed-time t bound read as often does not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairstream.estimators import sequence
from fairstream.estimators.sequence import MeanSequence
from fairstream.lab.studies.mean_alarms import false_certificates, gap_alarms
from tests.helpers import binomial_slack

ALPHA = 0.05


def capital_by_hand(outcomes: list[float], m: float, alpha: float = 0.05, cap: float = 0.5) -> list[float]:
    """log K⁺_t(m) after each outcome, from Waudby-Smith & Ramdas (2024): predictable plug-in bets
    λ_t = √(2 log(1/α) / (σ̂²_{t−1} t log(1 + t))), μ̂_t = (1/2 + Σ x_i)/(t + 1), σ̂²_t = (1/4 + Σ (x_i − μ̂_i)²)/(t + 1),
    truncated at cap/m."""
    log_capital, total, squares, path = 0.0, 0.0, 0.25, []
    for t, x in enumerate(outcomes, start=1):
        variance = squares / t
        bet = min(math.sqrt(2 * math.log(1 / alpha) / (variance * t * math.log(1 + t))), cap / m)
        log_capital += math.log(1 + bet * (x - m))
        path.append(log_capital)
        total += x
        squares += (x - (0.5 + total) / (t + 1)) ** 2
    return path


def test_the_lower_bound_is_where_the_hand_computed_capital_reached_one_over_alpha():
    rng = np.random.default_rng(3)
    outcomes = list(rng.beta(6, 2, size=400))
    grid = sequence.means()
    state = sequence.start()
    for t, x in enumerate(outcomes, start=1):
        sequence.step(state, x, grid)
        if t % 50:
            continue
        lower = float(sequence.lower(state, ALPHA, grid))
        for m in (0.55, 0.6, 0.65, 0.7, 0.72):
            rejected = max(capital_by_hand(outcomes[:t], m)) >= math.log(1 / ALPHA)
            assert rejected == (lower >= m - 1e-12), (t, m, lower)


def test_a_sequence_of_shifted_outcomes_gives_the_shifted_bounds():
    rng = np.random.default_rng(4)
    unit, scaled = MeanSequence(0.0, 1.0), MeanSequence(300.0, 850.0)
    for x in rng.beta(2, 3, size=300):
        unit.update(float(x))
        scaled.update(300.0 + 550.0 * float(x))
    assert scaled.bounds(0.1) == pytest.approx(tuple(300 + 550 * bound for bound in unit.bounds(0.1)), abs=1e-9)


def test_bounds_never_loosen_and_hold_the_mean():
    sequence_ = MeanSequence(0.0, 1.0)
    rng = np.random.default_rng(5)
    previous = (0.0, 1.0)
    for x in rng.beta(3, 3, size=500):
        sequence_.update(float(x))
        low, high = sequence_.bounds(ALPHA)
        assert previous[0] <= low <= 0.5 <= high <= previous[1]
        previous = (low, high)


def test_over_1000_streams_at_the_constraint_the_sequence_rarely_certifies_and_the_t_bound_read_daily_often_does():
    """A group whose mean is exactly τ must not be certified E ≥ τ: at most δ of streams, however often it is read."""
    result = false_certificates(0.6, delta=ALPHA, runs=1000, steps=300, seed=11)
    anytime, fixed = result.rates()
    assert anytime <= ALPHA + binomial_slack(ALPHA, 1000)
    assert fixed > 3 * ALPHA  # the fixed-time bound, valid at one time, certifies falsely when read every step


def test_over_1000_fair_streams_the_gap_test_keeps_false_alarms_below_alpha_and_detects_unfair_ones():
    fair = gap_alarms(0.65, 0.55, epsilon=0.1, alpha=ALPHA, runs=1000, steps=500, seed=12)
    anytime, fixed = fair.rates()
    assert anytime <= ALPHA + binomial_slack(ALPHA, 1000) and fixed > 3 * ALPHA
    unfair = gap_alarms(0.75, 0.5, epsilon=0.1, alpha=ALPHA, runs=1000, steps=500, seed=13)
    assert unfair.rates() == (1.0, 1.0)
    delay_anytime, delay_fixed = unfair.median_delays()
    assert delay_fixed < delay_anytime < 200  # the price of validity at every look: a later, but certain, detection
