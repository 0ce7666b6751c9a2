"""Groups known only as probabilities: the moment estimates against statsmodels' least squares with HC1 errors, and on
calibrated proxy streams drawn here (each trial's true group drawn from its probability vector) the intervals' coverage,
the verdicts' false alarms, and bounds that hold where the moments' assumption does not."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from fairstream.estimators.means import normal_width, sequence_width
from fairstream.estimators.proxy import ProxyLayout, proxy_rates
from fairstream.estimators.proxy_bounds import proxy_bounds
from fairstream.verdicts.judge import VerdictRule
from fairstream.verdicts.proxy import proxy_part

GROUPS = ("a", "b", "c")
LAYOUT = ProxyLayout(GROUPS)
RATES = np.array([0.60, 0.45, 0.52])
"""The issue's three approval rates: a gap of 0.15 between a and b."""


def calibrated(seed: int, trials: int, concentration: float = 0.6):
    """Probability vectors from a Dirichlet, each trial's true group drawn from its own vector."""
    rng = np.random.default_rng(seed)
    probabilities = rng.dirichlet([concentration] * len(GROUPS), size=trials)
    true_group = (rng.random(trials)[:, None] > np.cumsum(probabilities, axis=1)).sum(axis=1)
    return rng, probabilities, true_group


def approvals(seed: int, trials: int, rates=RATES):
    rng, probabilities, group = calibrated(seed, trials)
    return probabilities, rng.random(trials) < rates[group]


def test_a_cells_numbers_are_the_sums_of_its_trials_numbers():
    rng = np.random.default_rng(0)
    probabilities = rng.dirichlet([0.5] * 4, size=60)
    hits, members = rng.random(60) < 0.5, rng.random(60) < 0.7
    layout = ProxyLayout(("w", "x", "y", "z"))
    one_by_one = sum(np.array(layout.numbers(p, bool(h), bool(m))) for p, h, m in zip(probabilities, hits, members))
    assert np.allclose(layout.sums(probabilities, hits, members), one_by_one, rtol=1e-12, atol=1e-12)


def test_selection_rates_are_least_squares_on_the_probabilities_with_hc1_errors():
    probabilities, approved = approvals(1, 2500)
    ols = sm.OLS(approved.astype(float), probabilities).fit(cov_type="HC1")
    estimated = proxy_rates(LAYOUT, LAYOUT.sums(probabilities, approved, np.ones(2500, bool)), 2500)
    assert estimated is not None
    assert np.allclose(estimated.rates, ols.params, rtol=1e-9)
    assert np.allclose(estimated.covariance, ols.cov_params(), rtol=1e-7)


def test_the_weighted_rate_shrinks_the_gap_the_moments_recover():
    probabilities, approved = approvals(2, 20_000)
    estimated = proxy_rates(LAYOUT, LAYOUT.sums(probabilities, approved, np.ones(20_000, bool)), 20_000)
    weighted_gap = estimated.weighted[0] - estimated.weighted[1]
    moment_gap = estimated.rates[0] - estimated.rates[1]
    assert weighted_gap < 0.08  # the true 0.15, pulled toward the pooled rate
    assert abs(moment_gap - 0.15) < 4 * estimated.gap_error("a", "b")


@pytest.mark.parametrize("part", ["selection_rate", "true_positive_rate"])
def test_each_groups_interval_covers_its_true_rate_at_its_level(part):
    label_rates, tprs = np.array([0.3, 0.5, 0.4]), np.array([0.7, 0.55, 0.6])
    covered = np.zeros(len(GROUPS))
    runs, z = 200, normal_width(0.05)
    for seed in range(runs):
        rng, probabilities, group = calibrated(100 + seed, 2000)
        if part == "selection_rate":
            truth, hits, members = RATES, rng.random(2000) < RATES[group], np.ones(2000, bool)
        else:
            truth, members = tprs, rng.random(2000) < label_rates[group]
            hits = np.where(members, rng.random(2000) < tprs[group], rng.random(2000) < 0.2)
        estimated = proxy_rates(LAYOUT, LAYOUT.sums(probabilities, hits, members), 2000)
        for index, name in enumerate(GROUPS):
            covered[index] += abs(estimated.rates[index] - truth[index]) <= z * estimated.standard_error(name)
    # 95 % intervals over 200 runs: a coverage below 91 % is four standard deviations off
    assert (covered / runs >= 0.91).all(), covered / runs


def test_anytime_intervals_cover_each_groups_rate_at_every_look():
    runs, missed = 100, np.zeros(len(GROUPS))
    for seed in range(runs):
        probabilities, approved = approvals(300 + seed, 4000)
        ever = np.zeros(len(GROUPS), bool)
        for trials in range(250, 4001, 250):
            estimated = proxy_rates(LAYOUT, LAYOUT.sums(probabilities[:trials], approved[:trials], np.ones(trials, bool)), trials)
            width = sequence_width(0.05, trials)
            ever |= [abs(estimated.rates[i] - RATES[i]) > width * estimated.standard_error(name) for i, name in enumerate(GROUPS)]
        missed += ever
    assert (missed / runs <= 0.05 + 2 * (0.05 * 0.95 / runs) ** 0.5).all(), missed / runs


def _alarmed(mode: str, seed: int, trials: int, looks: range) -> bool:
    probabilities, approved = approvals(seed, trials, rates=np.array([0.5, 0.4, 0.45]))  # a gap of exactly ε = 0.1
    rule = VerdictRule(mode=mode, threshold=0.1, alpha=0.05)
    for n in looks:
        numbers = [*LAYOUT.sums(probabilities[:n], approved[:n], np.ones(n, bool)), n]
        if proxy_part(numbers, LAYOUT, rule, level=lambda _pair: 0.05 / 3, min_trials=100)["violated"]:
            return True
    return False


def test_confident_verdicts_keep_their_false_alarm_rate_at_the_threshold():
    runs = 200
    alarms = sum(_alarmed("confident", 500 + seed, 3000, range(3000, 3001)) for seed in range(runs))
    assert alarms / runs <= 0.05 + 2 * (0.05 * 0.95 / runs) ** 0.5


def test_anytime_verdicts_keep_their_false_alarm_rate_at_every_look():
    runs = 100
    alarms = sum(_alarmed("anytime", 800 + seed, 4000, range(200, 4001, 400)) for seed in range(runs))
    assert alarms / runs <= 0.05 + 2 * (0.05 * 0.95 / runs) ** 0.5


def test_unfair_streams_are_found():
    probabilities, approved = approvals(7, 8000)  # a gap of 0.15 against ε = 0.1
    body = proxy_part([*LAYOUT.sums(probabilities, approved, np.ones(8000, bool)), 8000], LAYOUT, VerdictRule(mode="confident", threshold=0.05), level=lambda _pair: 0.05 / 3, min_trials=100)
    assert body["violated"] is True and body["pair"] == ["a", "b"]
    assert body["interval"][0] > 0.05


def test_bounds_hold_where_outcomes_also_depend_on_the_proxy_inputs():
    """The approval depends on the probability vector itself as well as the group: the moments are biased, the bounds
    (calibration alone) still hold the truth, measured on a million trials."""

    def draw(seed, trials):
        rng, probabilities, group = calibrated(seed, trials, concentration=0.4)
        approve = 0.2 + 0.5 * probabilities[:, 0] + 0.15 * (group == 1)
        return probabilities, group, rng.random(trials) < approve

    _, group, approved = draw(0, 1_000_000)
    truth = [approved[group == index].mean() for index in range(len(GROUPS))]
    biased = 0
    for seed in range(1, 41):
        probabilities, _, approved = draw(seed, 3000)
        sums = LAYOUT.sums(probabilities, approved, np.ones(3000, bool))
        bounds = proxy_bounds(LAYOUT, sums, 0.05)
        for index, name in enumerate(GROUPS):
            assert bounds[name][0] <= truth[index] <= bounds[name][1], (seed, name, bounds[name], truth[index])
        estimated = proxy_rates(LAYOUT, sums, 3000)
        biased += abs(estimated.rates[0] - truth[0]) > 3 * estimated.standard_error("a")
    assert biased > 20  # the moments' assumption is broken here, and it shows


def test_groups_that_cannot_be_told_apart_give_no_estimate():
    probabilities = np.tile([0.5, 0.5, 0.0], (500, 1))  # a and b always alike, c never likely
    approved = np.random.default_rng(3).random(500) < 0.5
    sums = LAYOUT.sums(probabilities, approved, np.ones(500, bool))
    assert proxy_rates(LAYOUT, sums, 500) is None
    body = proxy_part([*sums, 500], LAYOUT, VerdictRule(mode="confident"), level=lambda _pair: 0.05, min_trials=1)
    assert body["violated"] is None and body["interval"] is None and "cannot be told apart" in body["interval_reason"]
