"""Drift theory (Lemmas 6.2–6.4, Thm 6.1): the fixpoint, Eq. 8, and Monte Carlo runs of the shield converging to them."""

from __future__ import annotations

import numpy as np
import pytest

from fairstream.shields import (
    Exponential,
    MonotoneEnergy,
    Polynomial,
    ShieldError,
    Target,
    bias,
    expected_interference,
    fixpoint,
    mean_field,
    required_energy,
)
from fairstream.shields.energy import drift as drift_module
from tests.shields.chain import simulate

TARGET = Target(50, running=(0.4, 0.6), limit=(0.45, 0.55))
VALUE = required_energy(0.3, 0.45, 0.95)

CASES = {
    "family, push up": (MonotoneEnergy(0.3, TARGET, alpha=0.5), 0.3),
    "family, push down": (MonotoneEnergy(0.7, TARGET, alpha=0.2), 0.7),
    "family, p in L": (MonotoneEnergy(0.5, TARGET, alpha=0.5), 0.5),
    "polynomial": (Polynomial.through(0.45, VALUE, k=1, pivot=0.95), 0.3),
    "exponential": (Exponential.through(0.45, VALUE, b=0.5, pivot=0.95), 0.3),
}


@pytest.mark.parametrize("name", CASES)
def test_h_is_strictly_decreasing_with_its_root_between_p_and_the_pivot(name):
    zeta, p = CASES[name]
    x = np.linspace(0, 1, 10_001)
    assert np.all(np.diff(mean_field(zeta, p, x)) < 0)
    assert np.all(np.diff(bias(zeta, p, x)) <= 1e-12)  # g is non-increasing
    point = fixpoint(zeta, p)
    assert min(p, zeta.pivot) - 1e-9 <= point <= max(p, zeta.pivot) + 1e-9
    assert abs(mean_field(zeta, p, point)) < 1e-9


@pytest.mark.parametrize("name", CASES)
def test_interference_at_the_fixpoint_is_the_distance_to_p(name):
    zeta, p = CASES[name]
    assert expected_interference(zeta, p) == pytest.approx(abs(fixpoint(zeta, p) - p), abs=1e-9)


def test_eq_8_is_the_condition_for_the_limit_point():
    """Thm 6.1: with ζ(x_L) equal to Eq. 8 the fixpoint is x_L; any other value moves it."""
    for pivot in (0.9, 0.95):
        value = required_energy(0.3, 0.45, pivot)
        assert fixpoint(Polynomial.through(0.45, value, k=1, pivot=pivot), 0.3) == pytest.approx(0.45, abs=1e-9)
        assert fixpoint(Polynomial.through(0.45, 0.9 * value, k=1, pivot=pivot), 0.3) < 0.45 - 1e-3
    value = required_energy(0.8, 0.6, 0.1)
    assert value == pytest.approx(0.25)
    assert fixpoint(Polynomial.through(0.6, value, k=1, pivot=0.1), 0.8) == pytest.approx(0.6, abs=1e-9)


def test_eq_45_on_the_gap_domain():
    assert required_energy(0.3, 0.05, -0.1, (-1.0, 1.0)) == pytest.approx(0.25 / 1.3)
    assert required_energy(-0.2, 0.0, 0.1, (-1.0, 1.0)) == pytest.approx(0.2 / 1.2)


def test_required_energy_needs_the_point_between_p_and_the_pivot():
    with pytest.raises(ShieldError) as error:
        required_energy(0.3, 0.7, pivot=0.6)
    assert str(error.value) == drift_module.NOT_BETWEEN.format(p=0.3, point=0.7, pivot=0.6)
    assert required_energy(0.5, 0.5, 0.5) == 0.0


def test_interference_needs_one_group():
    with pytest.raises(ShieldError, match="use group_interference for two groups"):
        expected_interference(MonotoneEnergy(0.3, Target(50, (-0.1, 0.1), (-0.05, 0.05)), 0.5, domain=(-1.0, 1.0)), 0.3)


def _check_runs(name: str, steps: int, runs: int, tolerance: float, seed: int) -> None:
    zeta, p = CASES[name]
    result = simulate(zeta, p, TARGET, steps, runs, np.random.default_rng(seed))
    point = fixpoint(zeta, p)
    assert abs(result.fairness.mean() - point) < tolerance
    assert np.quantile(np.abs(result.fairness - point), 0.99) < 0.02
    assert abs(result.interference.mean() - abs(point - p)) < tolerance


def test_limit_and_interference_match_the_fixpoint_2000_runs_of_20000_steps():
    _check_runs("family, push up", steps=20_000, runs=2_000, tolerance=0.002, seed=11)


@pytest.mark.parametrize("name", CASES)
def test_limit_and_interference_match_the_fixpoint(name):
    _check_runs(name, steps=10_000, runs=1_000, tolerance=0.004, seed=12)


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_limit_and_interference_match_the_fixpoint_closely(name):
    _check_runs(name, steps=200_000, runs=2_000, tolerance=0.001, seed=13)
