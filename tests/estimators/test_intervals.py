"""Intervals for a rate and for a gap, against formulas and scipy code written independently, and by simulated coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fairstream.estimators import (
    INTERVALS,
    beta_credible,
    beta_difference,
    clopper_pearson,
    clopper_pearson_difference,
    newcombe_difference,
    wilson,
)
from fairstream.estimators.intervals import BAD_ALPHA, BAD_COUNTS, NO_TRIALS, NO_TRIALS_OR_PRIOR
from fairstream.records.errors import InsufficientData

ALPHA = 0.05
COUNTS = [(0, 1), (1, 1), (0, 30), (3, 30), (15, 30), (30, 30), (17, 200), (150, 200), (2.5, 7.0)]


def wilson_by_roots(s: float, n: float, alpha: float) -> tuple[float, float]:
    """The rates p with (p̂ − p)² = z²·p(1 − p)/n: roots of (1 + z²/n)p² − (2p̂ + z²/n)p + p̂² = 0."""
    z2 = stats.norm.ppf(1 - alpha / 2) ** 2
    p_hat = s / n
    low, high = sorted(np.roots([1 + z2 / n, -(2 * p_hat + z2 / n), p_hat * p_hat]).real)
    return low, high


@pytest.mark.parametrize(("s", "n"), COUNTS)
def test_wilson_matches_the_roots_of_the_score_equation(s, n):
    assert wilson(s, n, ALPHA) == pytest.approx(wilson_by_roots(s, n, ALPHA), abs=1e-7)


@pytest.mark.parametrize(("s", "n"), [(s, n) for s, n in COUNTS if float(s).is_integer()])
def test_clopper_pearson_matches_scipy_binomtest(s, n):
    exact = stats.binomtest(int(s), int(n)).proportion_ci(1 - ALPHA, method="exact")
    assert clopper_pearson(s, n, ALPHA) == pytest.approx((exact.low, exact.high), abs=1e-10)


def test_clopper_pearson_is_closed_at_the_edges():
    assert clopper_pearson(0, 20, ALPHA)[0] == 0.0
    assert clopper_pearson(20, 20, ALPHA)[1] == 1.0
    assert clopper_pearson(0, 20, ALPHA)[1] == pytest.approx(1 - (ALPHA / 2) ** (1 / 20))


@pytest.mark.parametrize(("s", "n"), COUNTS)
@pytest.mark.parametrize(("prior", "confidence"), [(0.5, 2), (0.2, 10), (0.9, 0.5)])
def test_beta_credible_matches_scipy_beta_interval(s, n, prior, confidence):
    expected = stats.beta.interval(1 - ALPHA, s + prior * confidence, n - s + (1 - prior) * confidence)
    assert beta_credible(s, n, ALPHA, prior, confidence) == pytest.approx(expected, abs=1e-10)


def test_beta_credible_falls_back_to_jeffreys_without_prior_weight():
    assert beta_credible(3, 10, ALPHA, prior=0.9, confidence=0) == pytest.approx(stats.beta.interval(0.95, 3.5, 7.5))


def test_beta_credible_without_trials_is_the_prior_interval():
    assert beta_credible(0, 0, ALPHA, prior=0.3, confidence=10) == pytest.approx(stats.beta.interval(0.95, 3, 7))


def test_a_prior_at_zero_without_hits_is_a_point_mass():
    assert beta_credible(0, 5, ALPHA, prior=0.0, confidence=4) == (0.0, 0.0)
    assert beta_difference(0, 5, 0, 8, ALPHA, prior=0.0, confidence=4) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("s_a", "n_a", "s_b", "n_b", "prior", "confidence"),
    [
        (30, 50, 20, 50, 0.5, 0),
        (0, 3, 2, 2, 0.5, 0),
        (5000, 100000, 1, 4, 0.5, 0),
        (1, 4, 50000, 100000, 0.3, 10),
        (3, 7, 400, 900, 0.2, 1),
        (0, 0, 5, 10, 0.0, 2),
    ],
)
def test_beta_difference_matches_a_seeded_monte_carlo(s_a, n_a, s_b, n_b, prior, confidence):
    rng = np.random.default_rng(7)

    def draws(s: float, n: float) -> np.ndarray:
        a, b = (s + 0.5, n - s + 0.5) if confidence == 0 else (s + prior * confidence, n - s + (1 - prior) * confidence)
        return np.zeros(1_000_000) if a == 0 else rng.beta(a, b, size=1_000_000)

    expected = np.quantile(draws(s_a, n_a) - draws(s_b, n_b), [ALPHA / 2, 1 - ALPHA / 2])
    assert beta_difference(s_a, n_a, s_b, n_b, ALPHA, prior, confidence) == pytest.approx(tuple(expected), abs=3e-3)


def test_beta_difference_is_antisymmetric():
    low, high = beta_difference(12, 40, 30, 45, ALPHA, 0.5, 2)
    assert beta_difference(30, 45, 12, 40, ALPHA, 0.5, 2) == pytest.approx((-high, -low), abs=1e-9)


@pytest.mark.parametrize(("s_a", "n_a", "s_b", "n_b"), [(30, 50, 20, 50), (0, 10, 10, 10), (3, 200, 40, 90), (1, 1, 0, 1)])
def test_newcombe_matches_the_hand_written_formula(s_a, n_a, s_b, n_b):
    l_a, u_a = wilson_by_roots(s_a, n_a, ALPHA)
    l_b, u_b = wilson_by_roots(s_b, n_b, ALPHA)
    p_a, p_b = s_a / n_a, s_b / n_b
    d = p_a - p_b
    expected = (d - math.sqrt((p_a - l_a) ** 2 + (u_b - p_b) ** 2), d + math.sqrt((u_a - p_a) ** 2 + (p_b - l_b) ** 2))
    assert newcombe_difference(s_a, n_a, s_b, n_b, ALPHA) == pytest.approx(expected, abs=1e-7)


def test_clopper_pearson_difference_combines_the_bonferroni_intervals():
    l_a, u_a = clopper_pearson(30, 50, ALPHA / 2)
    l_b, u_b = clopper_pearson(20, 50, ALPHA / 2)
    assert clopper_pearson_difference(30, 50, 20, 50, ALPHA) == (l_a - u_b, u_a - l_b)


def coverage(interval, p: float, n: int, seed: int) -> float:
    """Share of 2,000 seeded binomial samples whose interval covers p (each possible count is evaluated once)."""
    covers = np.array([low <= p <= high for low, high in (interval(s, n, ALPHA) for s in range(n + 1))])
    return float(covers[np.random.default_rng(seed).binomial(n, p, size=2000)].mean())


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("n", [30, 200])
def test_wilson_and_clopper_pearson_cover_the_rate(p, n):
    assert coverage(wilson, p, n, seed=n) >= 1 - ALPHA - 0.02
    assert coverage(clopper_pearson, p, n, seed=n) >= 1 - ALPHA


@pytest.mark.parametrize(("p_a", "p_b"), [(0.5, 0.5), (0.1, 0.4), (0.8, 0.3)])
def test_gap_intervals_cover_the_difference(p_a, p_b):
    n, rng = 30, np.random.default_rng(11)
    s_a, s_b = rng.binomial(n, p_a, size=2000), rng.binomial(n, p_b, size=2000)
    for name, slack in (("wilson", 0.02), ("clopper_pearson", 0.0)):
        table = np.array([[INTERVALS[name].difference(a, n, b, n, ALPHA, 0.5, 0) for b in range(n + 1)] for a in range(n + 1)])
        lows, highs = table[s_a, s_b, 0], table[s_a, s_b, 1]
        assert np.mean((lows <= p_a - p_b) & (p_a - p_b <= highs)) >= 1 - ALPHA - slack, name


def test_intervals_share_one_signature():
    assert INTERVALS["beta_credible"].group(3, 10, ALPHA, 0.5, 2) == beta_credible(3, 10, ALPHA, 0.5, 2)
    assert INTERVALS["clopper_pearson"].group(3, 10, ALPHA, 0.5, 2) == clopper_pearson(3, 10, ALPHA)
    assert INTERVALS["wilson"].difference(3, 10, 5, 9, ALPHA, 0.5, 2) == newcombe_difference(3, 10, 5, 9, ALPHA)
    assert INTERVALS["beta_credible"].difference(3, 10, 5, 9, ALPHA, 0.5, 2) == beta_difference(3, 10, 5, 9, ALPHA, 0.5, 2)
    assert {name: kind.per_difference for name, kind in INTERVALS.items()} == {
        "beta_credible": beta_difference,
        "wilson": newcombe_difference,
        "clopper_pearson": clopper_pearson_difference,
    }


@pytest.mark.parametrize("name", sorted(INTERVALS))
def test_undefined_without_trials(name):
    kind = INTERVALS[name]
    message = NO_TRIALS_OR_PRIOR if kind.uses_prior else NO_TRIALS
    with pytest.raises(InsufficientData) as error:
        kind.group(0, 0, ALPHA, 0.5, 0)
    assert str(error.value) == message
    with pytest.raises(InsufficientData):
        kind.difference(3, 10, 0, 0, ALPHA, 0.5, 0)


def test_rejects_impossible_counts_and_levels():
    with pytest.raises(ValueError) as error:
        wilson(11, 10, ALPHA)
    assert str(error.value) == BAD_COUNTS.format(s=11, n=10)
    with pytest.raises(ValueError) as error:
        beta_credible(1, 10, 5, 0.5, 1)
    assert str(error.value) == BAD_ALPHA.format(alpha=5)
