"""Time to verdict: the scale factor is the normal-approximation closed form, and at the trials it names a simulated
Newcombe interval decides the part about half the time (it is the point where the expected interval touches ε)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fairstream.estimators.intervals import newcombe_difference
from fairstream.verdicts.horizon import scale_to_decide, trials_to_decide


def test_the_scale_is_the_closed_form_for_each_mode_and_direction():
    variance = 0.21 / 200 + 0.16 / 200
    assert scale_to_decide("confident", 0.15, variance, 0.05, 0.05, 0.05) == ("violated", pytest.approx(stats.norm.ppf(0.975) ** 2 * variance / 0.1**2))
    assert scale_to_decide("confident", 0.02, variance, 0.05, 0.05, 0.05) == ("certified", pytest.approx(stats.norm.ppf(0.95) ** 2 * variance / 0.03**2))
    assert scale_to_decide("anytime", -0.15, variance, 0.05, 0.025, 0.05) == ("violated", pytest.approx(2 * math.log(80) * variance / 0.1**2))
    assert scale_to_decide("anytime", 0.0, variance, 0.05, 0.025, 0.05) == ("certified", pytest.approx(2 * math.log(20) * variance / 0.05**2))
    assert scale_to_decide("confident", 0.05, variance, 0.05, 0.05, 0.05) is None


def part(p_high: float, p_low: float, epsilon: float) -> dict:
    return {"pair": ["a", "b"], "alpha": 0.05, "threshold": epsilon,
            "groups": {"a": {"rate": p_high, "trials": 200}, "b": {"rate": p_low, "trials": 200}}}  # fmt: skip


def test_at_the_trials_named_a_newcombe_interval_shows_a_violation_about_half_the_time():
    """0.3 vs 0.2 at ε = 0.05: the trials named are where the expected interval's lower end reaches ε."""
    needed = trials_to_decide(part(0.3, 0.2, 0.05), "confident", 0.05)
    assert needed["toward"] == "violated" and needed["trials"]["a"] == needed["trials"]["b"]
    total = 200 + needed["trials"]["a"]
    rng = np.random.default_rng(3)
    decided = sum(newcombe_difference(rng.binomial(total, 0.3), total, rng.binomial(total, 0.2), total, 0.05)[0] > 0.05 for _ in range(2000))
    assert decided / 2000 == pytest.approx(0.5, abs=0.06)


def test_at_the_trials_named_the_expected_interval_fits_inside_epsilon_and_not_before():
    """0.32 vs 0.30 at ε = 0.08 heads for a certificate: with the expected counts, Newcombe's 90 % interval (one-sided
    5 % a side) lies inside ±ε at the trials named and not at four fifths of them."""
    needed = trials_to_decide(part(0.32, 0.30, 0.08), "confident", 0.05)
    assert needed["toward"] == "certified"
    total = 200 + needed["trials"]["a"]
    low, high = newcombe_difference(0.32 * total, total, 0.30 * total, total, 0.10)
    assert -0.08 < low and high < 0.08
    fewer = 0.8 * total
    assert newcombe_difference(0.32 * fewer, fewer, 0.30 * fewer, fewer, 0.10)[1] > 0.08


def test_a_suppressed_cell_or_a_missing_level_gives_no_estimate():
    body = {"pair": ["a", "b"], "alpha": 0.05, "threshold": 0.1, "groups": {"a": {"rate": None, "trials": None}, "b": {"rate": 0.2, "trials": 50}}}
    assert trials_to_decide(body, "confident", 0.05) is None
    assert trials_to_decide({**body, "alpha": None}, "confident", 0.05) is None


def test_a_gap_a_hair_from_epsilon_needs_no_number_a_record_can_hold():
    """Orders of magnitude beyond any stream (and beyond 64-bit integers, which no JSON writer takes) are no estimate."""
    body = {"pair": ["a", "b"], "alpha": 0.05, "threshold": 0.1, "groups": {"a": {"rate": 0.6 + 1e-15, "trials": 500}, "b": {"rate": 0.5, "trials": 500}}}
    assert trials_to_decide(body, "confident", 0.05) is None
    body["groups"]["a"]["rate"] = 0.65
    assert trials_to_decide(body, "confident", 0.05)["toward"] == "violated"
