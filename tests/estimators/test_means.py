"""Means of real outcomes and the benefit rate: against numpy and scipy, merge, revert, pickling, and Hoeffding coverage."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from fairstream.estimators import BenefitRate, Mean, hoeffding_bounds, student_t_bounds
from fairstream.estimators.means import BAD_SIDES, NO_DEMAND, TOO_FEW_FOR_T
from fairstream.records.errors import InsufficientData

ALPHA = 0.05


def filled(xs, ws=None) -> Mean:
    mean = Mean()
    for x, w in zip(xs, ws if ws is not None else [1] * len(xs), strict=True):
        mean.update(float(x), w)
    return mean


@pytest.mark.parametrize("seed", range(3))
def test_mean_matches_numpy_on_growing_prefixes(seed):
    rng = np.random.default_rng(seed)
    xs, ws = rng.normal(3, 10, size=200), rng.integers(1, 5, size=200)
    mean, weighted = Mean(), Mean()
    for k in range(200):
        mean.update(xs[k])
        weighted.update(xs[k], int(ws[k]))
        prefix, weights = xs[: k + 1], ws[: k + 1]
        assert (mean.n, mean.get(), mean.m2) == pytest.approx((k + 1, prefix.mean(), prefix.var() * (k + 1)), rel=1e-9, abs=1e-9)
        center = np.average(prefix, weights=weights)
        assert weighted.get() == pytest.approx(center, rel=1e-9)
        assert weighted.m2 == pytest.approx(np.sum(weights * (prefix - center) ** 2), rel=1e-9, abs=1e-9)


def test_merge_equals_the_concatenated_data():
    rng = np.random.default_rng(1)
    left, right = rng.exponential(2, size=37), rng.exponential(5, size=81)
    merged = filled(left)
    merged += filled(right)
    whole = filled(np.concatenate([left, right]))
    assert (merged.n, merged.mean, merged.m2) == pytest.approx((whole.n, whole.mean, whole.m2), rel=1e-12)


def test_merge_with_an_empty_mean_changes_nothing():
    mean = filled([1.0, 4.0])
    mean += Mean()
    assert mean == filled([1.0, 4.0])
    empty = Mean()
    empty += filled([1.0, 4.0])
    assert empty == filled([1.0, 4.0])


def test_update_then_revert_is_a_no_op():
    mean = filled([2.0, -1.0, 7.5])
    mean.update(100.0, 3)
    mean.revert(100.0, 3)
    expected = filled([2.0, -1.0, 7.5])
    assert (mean.n, mean.mean, mean.m2) == pytest.approx((expected.n, expected.mean, expected.m2), rel=1e-12)
    for x in (2.0, -1.0, 7.5):
        mean.revert(x)
    assert mean == Mean()


def test_pickle_round_trip():
    mean, benefit = filled([1.0, 2.5]), BenefitRate(3.0, 7.0)
    assert pickle.loads(pickle.dumps(mean)) == mean
    assert pickle.loads(pickle.dumps(benefit)) == benefit


def test_undefined_without_enough_outcomes():
    with pytest.raises(InsufficientData):
        Mean().get()
    with pytest.raises(InsufficientData):
        hoeffding_bounds(Mean(), ALPHA, 0, 1)
    with pytest.raises(InsufficientData) as error:
        student_t_bounds(filled([1.0]), ALPHA)
    assert str(error.value) == TOO_FEW_FOR_T.format(n=1)


@pytest.mark.parametrize("n", [2, 5, 40])
def test_t_bounds_match_scipy(n):
    xs = np.random.default_rng(n).normal(1, 2, size=n)
    mean, scale = xs.mean(), stats.sem(xs)
    assert student_t_bounds(filled(xs), ALPHA) == pytest.approx(stats.t.interval(1 - ALPHA, n - 1, mean, scale), rel=1e-10)
    lower = mean - stats.t.ppf(1 - ALPHA, n - 1) * scale
    assert student_t_bounds(filled(xs), ALPHA, sides="lower") == pytest.approx((lower, math.inf), rel=1e-10)
    assert student_t_bounds(filled(xs), ALPHA, sides="upper") == pytest.approx((-math.inf, 2 * mean - lower), rel=1e-10)


def test_hoeffding_bounds_formula_and_sides():
    mean = filled([2.0, 3.0, 5.0, 6.0] * 10)  # 40 outcomes in [0, 10], mean 4
    half = 10 * math.sqrt(math.log(2 / ALPHA) / 80)
    assert hoeffding_bounds(mean, ALPHA, 0, 10) == pytest.approx((4 - half, 4 + half))
    one_sided = 10 * math.sqrt(math.log(1 / ALPHA) / 80)
    assert hoeffding_bounds(mean, ALPHA, 0, 10, sides="lower") == pytest.approx((4 - one_sided, 10))
    assert hoeffding_bounds(mean, ALPHA, 0, 10, sides="upper") == pytest.approx((0, 4 + one_sided))
    assert hoeffding_bounds(filled([2.0, 6.0]), ALPHA, 0, 10) == (0, 10)  # clipped to the outcome range
    with pytest.raises(ValueError) as error:
        hoeffding_bounds(mean, ALPHA, 0, 10, sides="left")
    assert str(error.value) == BAD_SIDES.format(sides="left")


@pytest.mark.parametrize(("sample", "true_mean"), [("beta", 2 / 7), ("bernoulli", 0.5)])
def test_hoeffding_bounds_cover_the_mean(sample, true_mean):
    rng = np.random.default_rng(9)
    draws = rng.beta(2, 5, size=(2000, 50)) if sample == "beta" else (rng.random((2000, 50)) < 0.5).astype(float)
    covered = 0
    for row in draws:
        low, high = hoeffding_bounds(filled(row), ALPHA, 0, 1)
        covered += low <= true_mean <= high
    assert covered / 2000 >= 1 - ALPHA


def test_benefit_rate_matches_the_discounted_sums():
    rng = np.random.default_rng(10)
    supply, demand = rng.poisson(3, size=(40, 5)), rng.poisson(6, size=(40, 5)) + 1
    for gamma in (1.0, 0.9, 0.5):
        benefit = BenefitRate()
        for tick in range(40):
            for s, d in zip(supply[tick], demand[tick], strict=True):
                benefit.update(s, d)
            weights = gamma ** np.arange(tick + 1)  # ELBERT: γ^t from the start of the episode
            expected = weights @ supply[: tick + 1].sum(axis=1) / (weights @ demand[: tick + 1].sum(axis=1))
            assert benefit.get() == pytest.approx(expected, rel=1e-12)
            benefit.next_step(gamma)


def test_benefit_rate_reproduces_elberts_figure_1():
    """ELBERT's Fig. 1, blue group, γ = 0.5: rejected 0 of 1 at t = 0, accepted 100 of 100 at t = 1 gives 50/51."""
    benefit = BenefitRate()
    benefit.update(supply=0, demand=1)
    benefit.next_step(0.5)
    benefit.update(supply=100, demand=100)
    assert benefit.get() == pytest.approx(50 / 51, rel=1e-15)
    assert round(benefit.get(), 3) == 0.980


def test_benefit_rate_merges_and_is_undefined_without_demand():
    left, right = BenefitRate(), BenefitRate()
    left.update(2, 5)
    right.update(1, 3)
    left += right
    assert left.get() == pytest.approx(3 / 8)
    with pytest.raises(InsufficientData) as error:
        BenefitRate(supply=0, demand=0).get()
    assert str(error.value) == NO_DEMAND.format(demand=0)
