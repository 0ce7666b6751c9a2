"""Energy functions satisfy Def. 4.1, the monotone family is ordered in α with its fixpoint at x_L, constructors validate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairstream.shields import (
    ONE_GROUP,
    TWO_GROUPS,
    Exponential,
    MonotoneEnergy,
    MonotoneFamily,
    Polynomial,
    ShieldError,
    Target,
    fixpoint,
    required_energy,
)
from fairstream.shields.energy import functions as energy_module

TARGET = Target(50, running=(0.4, 0.6), limit=(0.45, 0.55))


def assert_energy(zeta, points: int = 4001) -> None:
    """Def. 4.1 on a grid: ζ(c) = 0, flat at c, non-increasing below c, non-decreasing above, within [0, 1]."""
    lo, hi = zeta.domain
    c = zeta.pivot
    x = np.linspace(lo, hi, points)
    values = zeta(x)
    assert zeta(c) == 0.0
    assert np.all(values >= 0) and np.all(values <= 1 + 1e-12)
    below, above = values[x <= c], values[x >= c]
    assert np.all(np.diff(below) <= 1e-12)
    assert np.all(np.diff(above) >= -1e-12)
    h = 1e-8
    for side in (-h, h):
        if lo <= c + side <= hi:
            assert zeta(c + side) / h < 1e-3  # ζ'(c) = 0


@st.composite
def targets(draw, domain=ONE_GROUP):
    """Targets with s_lo < l_lo ≤ l_hi < s_hi inside the domain, ends at least 0.01 apart."""
    lo, hi = domain
    ends = sorted(draw(st.lists(st.floats(lo + 0.01, hi - 0.01), min_size=4, max_size=4)))
    if min(np.diff(ends)) < 0.01:
        ends = [lo + (hi - lo) * f for f in (0.3, 0.45, 0.55, 0.7)]
    return Target(draw(st.integers(1, 100)), running=(ends[0], ends[3]), limit=(ends[1], ends[2]))


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 4), pivot=st.floats(0, 1), share=st.floats(0, 1), two=st.booleans())
def test_polynomial_is_an_energy(k, pivot, share, two):
    domain = TWO_GROUPS if two else ONE_GROUP
    pivot = domain[0] + (domain[1] - domain[0]) * pivot
    assert_energy(Polynomial(share * Polynomial.most(k, pivot, domain), k, pivot, domain))


@settings(max_examples=60, deadline=None)
@given(b=st.floats(0.1, 50), pivot=st.floats(0, 1), share=st.floats(0, 1), two=st.booleans())
def test_exponential_is_an_energy(b, pivot, share, two):
    domain = TWO_GROUPS if two else ONE_GROUP
    pivot = domain[0] + (domain[1] - domain[0]) * pivot
    assert_energy(Exponential(share * Exponential.most(b, pivot, domain), b, pivot, domain))


@settings(max_examples=80, deadline=None)
@given(target=targets(), p=st.floats(0, 1), alpha=st.floats(0, 1), k=st.integers(2, 5))
def test_monotone_member_is_an_energy_with_its_fixpoint_at_the_limit_point(target, p, alpha, k):
    zeta = MonotoneEnergy(p, target, alpha, k)
    assert_energy(zeta)
    assert target.limit[0] <= zeta.limit_point <= target.limit[1]
    assert fixpoint(zeta, p) == pytest.approx(zeta.limit_point, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(target=targets(TWO_GROUPS), p=st.floats(-1, 1), alpha=st.floats(0, 1))
def test_monotone_member_on_the_gap_domain(target, p, alpha):
    zeta = MonotoneEnergy(p, target, alpha, domain=TWO_GROUPS)
    assert_energy(zeta)
    assert fixpoint(zeta, p) == pytest.approx(zeta.limit_point, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(target=targets(), p=st.floats(0, 1), alphas=st.lists(st.floats(0, 1), min_size=2, max_size=2))
def test_family_is_pointwise_monotone_in_alpha(target, p, alphas):
    gentle, steep = sorted(alphas)
    family = MonotoneFamily(p, target)
    x = np.linspace(0, 1, 2001)
    assert np.all(family(gentle)(x) <= family(steep)(x) + 1e-15)
    assert family(gentle).pivot == family(steep).pivot


@pytest.mark.parametrize(
    ("p", "side", "point", "pivot"),
    [(0.3, 1, 0.45, 0.6), (0.7, -1, 0.55, 0.4), (0.5, 0, 0.5, 0.5), (0.45, 0, 0.45, 0.45), (0.55, 0, 0.55, 0.55)],
)
def test_monotone_cases(p, side, point, pivot):
    zeta = MonotoneEnergy(p, TARGET, alpha=0.3)
    assert (zeta.side, zeta.limit_point, zeta.pivot) == (side, point, pivot)
    assert zeta(point) == pytest.approx(required_energy(p, point, pivot) if side else 0.0)


def test_the_mirror_case_is_the_reflection():
    x = np.linspace(0, 1, 1001)
    up = MonotoneEnergy(0.3, TARGET, alpha=0.4)
    down = MonotoneEnergy(0.7, Target(50, (0.4, 0.6), (0.45, 0.55)), alpha=0.4)
    assert np.allclose(up(x), down(1 - x), atol=1e-12)


def test_the_steepest_member_flips_everything_far_below_s():
    zeta = MonotoneEnergy(0.3, TARGET, alpha=1.0)
    assert zeta(0.4) == pytest.approx(1.0) and zeta(0.0) == 1.0 and zeta(1.0) == 1.0


def test_polynomial_through_the_limit_point_converges_there():
    p, point, pivot = 0.3, 0.45, 0.95
    value = required_energy(p, point, pivot)
    for zeta in (Polynomial.through(point, value, k=1, pivot=pivot), Exponential.through(point, value, b=0.5, pivot=pivot)):
        assert zeta(point) == pytest.approx(value)
        assert fixpoint(zeta, p) == pytest.approx(point, abs=1e-9)
    with pytest.raises(ShieldError, match="move the pivot further from 0.45"):
        Polynomial.through(point, value, k=2, pivot=pivot)  # a steeper shape cannot reach ζ(x_L) = v inside [0, 1]


def test_constructors_validate():
    with pytest.raises(ShieldError) as error:
        Polynomial(a=5.0, k=1, pivot=0.5)
    assert str(error.value) == energy_module.BAD_SCALE.format(most=4.0, domain=ONE_GROUP, a=5.0)
    with pytest.raises(ShieldError, match="move the pivot further from 0.45"):
        Polynomial.through(0.45, required_energy(0.3, 0.45, 0.6), k=1, pivot=0.6)
    with pytest.raises(ShieldError, match="exponent k must be an integer ≥ 1; got 0"):
        Polynomial(a=1.0, k=0, pivot=0.5)
    with pytest.raises(ShieldError, match="pivot must lie in the domain"):
        Polynomial(a=1.0, k=1, pivot=1.5)
    with pytest.raises(ShieldError, match="b must be positive"):
        Exponential(a=0.1, b=0.0, pivot=0.5)
    with pytest.raises(ShieldError, match="b must be positive"):
        Exponential(a=0.1, b=5000.0, pivot=0.5)
    with pytest.raises(ShieldError, match="steepness α must lie in"):
        MonotoneEnergy(0.3, TARGET, alpha=1.5)
    with pytest.raises(ShieldError, match="exponent k must be an integer ≥ 2; got 1"):
        MonotoneEnergy(0.3, TARGET, alpha=0.5, k=1)
    with pytest.raises(ShieldError, match="must lie strictly inside S"):
        MonotoneEnergy(0.3, Target(50, (0.4, 0.6), (0.4, 0.55)), alpha=0.5)
    with pytest.raises(ShieldError, match="running target S must lie inside the domain"):
        MonotoneEnergy(0.0, Target(50, (-0.1, 0.1), (-0.05, 0.05)), alpha=0.5)
    with pytest.raises(ShieldError, match="p must lie in the domain"):
        MonotoneFamily(1.2, TARGET)


def test_target_validates():
    with pytest.raises(ShieldError, match="burn-in τ must be an integer ≥ 1; got 0"):
        Target(0, (0.4, 0.6), (0.45, 0.55))
    with pytest.raises(ShieldError, match="needs s_lo < s_hi"):
        Target(5, (0.6, 0.4), (0.45, 0.55))
    with pytest.raises(ShieldError, match="limit target L must be an interval inside S"):
        Target(5, (0.4, 0.6), (0.35, 0.55))
