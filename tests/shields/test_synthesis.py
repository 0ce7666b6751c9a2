"""Algorithm 1: the least steep member meeting λ, within the tolerance, and a clean failure when none does."""

from __future__ import annotations

import pytest

from fairstream.shields import MonotoneFamily, ShieldError, Target, synthesize, tail_bound, violations
from fairstream.shields.energy import synthesis as synthesis_module

TARGET = Target(50, running=(0.4, 0.6), limit=(0.45, 0.55))


def _measure(family: MonotoneFamily, alpha: float, horizon: int, measure: str) -> float:
    exact = violations(family(alpha), family.p, family.target, horizon)
    value = exact.probability if measure == "probability" else exact.expected
    return value + tail_bound(family(alpha), family.p, family.target, horizon)


@pytest.mark.parametrize(
    ("p", "target", "lam", "horizon", "measure"),
    [
        (0.3, TARGET, 0.05, 1000, "probability"),
        (0.3, TARGET, 0.05, 1000, "expected"),
        (0.7, TARGET, 0.1, 500, "probability"),
        (0.5, TARGET, 0.01, 500, "probability"),
        (0.2, Target(30, (0.35, 0.65), (0.45, 0.55)), 0.02, 600, "probability"),
    ],
)
def test_synthesis_returns_the_least_steep_member_meeting_lambda(p, target, lam, horizon, measure):
    family, tol = MonotoneFamily(p, target), 1e-3
    result = synthesize(family, lam, horizon, tol=tol, measure=measure)
    assert result.bound <= lam
    assert result.bound == pytest.approx(_measure(family, result.alpha, horizon, measure))
    assert _measure(family, result.alpha - tol, horizon, measure) > lam  # ε-minimal
    assert result.energy == family(result.alpha)
    assert result.interference == pytest.approx(abs(result.energy.limit_point - p), abs=1e-9)
    assert 0 < result.horizon_interference < 1
    assert result.iterations == 10 and result.seconds > 0 and result.measure == measure


def test_the_expected_count_asks_for_a_steeper_member_than_the_probability():
    family = MonotoneFamily(0.3, TARGET)
    probability = synthesize(family, 0.05, 600, tol=1e-2)
    expected = synthesize(family, 0.05, 600, tol=1e-2, measure="expected")
    assert expected.alpha >= probability.alpha


def test_synthesis_fails_cleanly_when_no_member_meets_lambda():
    family = MonotoneFamily(0.3, Target(10, (0.44, 0.56), (0.45, 0.55)))
    steepest = _measure(family, 1.0, 500, "probability")
    with pytest.raises(ShieldError) as error:
        synthesize(family, 1e-3, 500)
    message = str(error.value)
    assert message.startswith("no member of the family meets λ = 0.001; the steepest (α = 1) gives ")
    assert message.endswith("; widen S or raise λ")
    assert f"{steepest:.4g}" in message


def test_synthesis_checks_its_inputs():
    family = MonotoneFamily(0.3, TARGET)
    with pytest.raises(ShieldError, match="λ must be positive; got 0"):
        synthesize(family, 0, 500)
    with pytest.raises(ShieldError) as error:
        synthesize(family, 0.05, 500, tol=0.0)
    assert str(error.value) == synthesis_module.BAD_TOLERANCE.format(tol=0.0)
    with pytest.raises(ShieldError, match="measure must be 'probability' or 'expected'; got 'mean'"):
        synthesize(family, 0.05, 500, measure="mean")
    with pytest.raises(ShieldError, match="horizon T must be an integer ≥ the burn-in"):
        synthesize(family, 0.05, 20)


def test_synthesis_over_a_horizon_of_1000_takes_seconds():
    result = synthesize(MonotoneFamily(0.3, TARGET), 0.05, 1000)
    assert result.seconds < 10


def full_band(energy, p: float, target: Target, horizon: int) -> tuple[float, float]:
    """The dynamic programme over every count 0..t at every step (no band), written plainly: (P_viol, E_viol) over [τ, T]."""
    import numpy as np

    from fairstream.shields.energy.drift import bias

    s_lo, s_hi = target.running
    dist, alive = np.zeros(horizon + 1), np.zeros(horizon + 1)
    dist[0] = alive[0] = 1.0
    probability = expected = 0.0
    for t in range(horizon):
        g = np.full(t + 1, p) if t == 0 else bias(energy, p, np.arange(t + 1) / t)
        for row in (dist, alive):
            now = row[: t + 1].copy()
            row[: t + 1] = now * (1 - g)
            row[1 : t + 2] += now * g
        if t + 1 >= target.burn_in:
            outside = (np.arange(t + 2) / (t + 1) < s_lo) | (np.arange(t + 2) / (t + 1) > s_hi)
            expected += dist[: t + 2][outside].sum()
            probability += alive[: t + 2][outside].sum()
            alive[: t + 2][outside] = 0.0
    return probability, expected


@pytest.mark.parametrize(("p", "alpha"), [(0.3, 0.2), (0.3, 0.9), (0.62, 0.5)])
def test_the_banded_programme_equals_the_full_one(p, alpha):
    energy = MonotoneFamily(p, TARGET)(alpha)
    exact = violations(energy, p, TARGET, 800)
    assert (exact.probability, exact.expected) == pytest.approx(full_band(energy, p, TARGET, 800), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("measure", ["probability", "expected"])
def test_stopping_early_gives_the_answer_of_the_full_horizon(measure):
    """Near the boundary and far from it, accepted or not: `decides` says what measure[τ, T] + tail(T) ≤ λ says."""
    from fairstream.shields.energy.violations import decides

    family, lam = MonotoneFamily(0.3, TARGET), 0.05
    answers = []
    for alpha in (0.0, 0.3, 0.55, 0.5586, 0.56, 0.8, 1.0):
        full = _measure(family, alpha, 2000, measure) <= lam
        assert decides(family(alpha), family.p, TARGET, 2000, lam, measure) == full, alpha
        answers.append(full)
    assert True in answers and False in answers


def test_a_settle_margin_puts_the_limit_point_inside_l_and_finite_streams_end_there():
    """On L's edge about half of all streams end just outside L; 0.01 inside, nearly all end inside."""
    from fairstream.shields.energy.simulation import simulate

    shares = {}
    for margin in (0.0, 0.01):
        result = synthesize(MonotoneFamily(0.3, TARGET.settled(margin)), 0.05, 1000, tol=1e-2)
        assert result.energy.limit_point == pytest.approx(0.45 + margin)
        shares[margin] = simulate(result.energy, 0.3, runs=300, steps=4000, seed=5, limit=TARGET.limit).inside_limit
    assert shares[0.0] < 0.7 and shares[0.01] > 0.9


def test_settling_never_moves_l_past_its_middle():
    assert TARGET.settled(0.2).limit == pytest.approx((0.5 - 0.0005, 0.5 + 0.0005))
    assert TARGET.settled(0.0) == TARGET
