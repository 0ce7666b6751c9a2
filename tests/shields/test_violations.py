"""The exact violation DP against Monte Carlo, its monotonicity in the steepness α, and the tail bound against the DP."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest

from fairstream.shields import MonotoneEnergy, MonotoneFamily, Polynomial, ShieldError, Target, tail_bound, violations
from tests.shields.chain import simulate

TARGET = Target(50, running=(0.4, 0.6), limit=(0.45, 0.55))


@pytest.mark.parametrize(
    ("p", "alpha", "seed"),
    [(0.3, 0.2, 1), (0.3, 0.6, 2), (0.3, 1.0, 3), (0.7, 0.3, 4), (0.5, 0.0, 5), (0.5, 0.1, 6)],
)
def test_dp_matches_monte_carlo(p, alpha, seed):
    zeta, runs = MonotoneEnergy(p, TARGET, alpha), 20_000
    exact = violations(zeta, p, TARGET, horizon=300)
    result = simulate(zeta, p, TARGET, steps=300, runs=runs, rng=np.random.default_rng(seed))
    share = result.violated.mean()
    assert abs(exact.probability - share) <= 4 * math.sqrt(exact.probability * (1 - exact.probability) / runs) + 1e-4
    count = result.violations
    assert abs(exact.expected - count.mean()) <= 4 * count.std() / math.sqrt(runs) + 1e-4
    flips = result.interference
    assert abs(exact.interference - flips.mean()) <= 4 * flips.std() / math.sqrt(runs) + 1e-4


def test_expected_count_bounds_the_probability_and_equals_it_at_a_single_time():
    exact = violations(MonotoneEnergy(0.3, TARGET, 0.4), 0.3, TARGET, horizon=500)
    assert 0 < exact.probability <= exact.expected
    late = violations(MonotoneEnergy(0.3, TARGET, 0.4), 0.3, dataclasses.replace(TARGET, burn_in=500), horizon=500)
    assert late.probability == pytest.approx(late.expected)  # one time step: P(F_T ∉ S) both ways


@pytest.mark.parametrize(
    ("p", "target"),
    [
        (0.3, TARGET),
        (0.7, TARGET),
        (0.5, TARGET),
        (0.3, Target(10, (0.4, 0.6), (0.45, 0.55))),
        (0.3, Target(2, (0.4, 0.6), (0.45, 0.55))),
        (0.1, Target(20, (0.3, 0.7), (0.48, 0.52))),
        (0.45, Target(5, (0.35, 0.6), (0.4, 0.5))),
        (0.9, Target(1, (0.2, 0.5), (0.3, 0.35))),
    ],
)
def test_a_steeper_member_never_violates_more(p, target):
    family = MonotoneFamily(p, target)
    results = [violations(family(alpha), p, target, horizon=400) for alpha in np.linspace(0, 1, 21)]
    assert np.all(np.diff([r.probability for r in results]) <= 1e-12)
    assert np.all(np.diff([r.expected for r in results]) <= 1e-12)


def test_the_mirror_case_gives_the_same_violations():
    """S and L are symmetric about ½, so p = 0.7 is the mirror image of p = 0.3."""
    for alpha in (0.0, 0.3, 1.0):
        up = violations(MonotoneEnergy(0.3, TARGET, alpha), 0.3, TARGET, horizon=300)
        down = violations(MonotoneEnergy(0.7, TARGET, alpha), 0.7, TARGET, horizon=300)
        assert (up.probability, up.expected, up.interference) == pytest.approx((down.probability, down.expected, down.interference))


@pytest.mark.parametrize(("alpha", "horizon"), [(0.1, 300), (0.3, 300), (0.3, 1000), (0.6, 200), (1.0, 100)])
def test_tail_bound_dominates_the_exact_later_violations(alpha, horizon):
    """Σ_{t ∈ (T, 4000]} P(F_t ∉ S), computed exactly, stays below the bound on Σ_{t > T}."""
    zeta = MonotoneEnergy(0.3, TARGET, alpha)
    later = violations(zeta, 0.3, dataclasses.replace(TARGET, burn_in=horizon + 1), horizon=4000)
    bound = tail_bound(zeta, 0.3, TARGET, horizon)
    assert later.expected <= bound
    assert tail_bound(zeta, 0.3, TARGET, 2 * horizon) <= bound


def test_tail_bound_falls_with_steepness_and_horizon():
    family = MonotoneFamily(0.3, TARGET)
    bounds = [tail_bound(family(alpha), 0.3, TARGET, 1000) for alpha in (0.2, 0.5, 1.0)]
    assert bounds[0] > bounds[1] > bounds[2] and bounds[2] < 1e-9


def test_tail_bound_is_infinite_when_the_fixpoint_leaves_s():
    zeta = Polynomial.through(0.35, 0.05 / 0.7, k=1, pivot=0.95)  # fixpoint 0.35 < s_lo
    assert tail_bound(zeta, 0.3, TARGET, 1000) == math.inf


def test_dp_is_fast():
    zeta = MonotoneEnergy(0.3, TARGET, 0.5)
    started = time.perf_counter()
    violations(zeta, 0.3, TARGET, horizon=1000)
    middle = time.perf_counter()
    violations(zeta, 0.3, TARGET, horizon=5000)
    assert middle - started < 1.0 and time.perf_counter() - middle < 5.0


def test_inputs_are_checked():
    zeta = MonotoneEnergy(0.3, TARGET, 0.5)
    with pytest.raises(ShieldError, match="horizon T must be an integer ≥ the burn-in τ = 50; got 10"):
        violations(zeta, 0.3, TARGET, horizon=10)
    with pytest.raises(ShieldError, match="the violation measures are for one group"):
        gap = Target(50, (-0.1, 0.1), (-0.05, 0.05))
        violations(MonotoneEnergy(0.3, gap, 0.5, domain=(-1.0, 1.0)), 0.3, gap, horizon=100)
    with pytest.raises(ShieldError, match="grid and terms must be integers ≥ 1"):
        tail_bound(zeta, 0.3, TARGET, 100, grid=0)
