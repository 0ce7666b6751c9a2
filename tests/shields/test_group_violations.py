"""The exact two-group violation measures against the runtime shield itself: every path of a short horizon enumerated
through `GroupShield.decide`, and a Monte Carlo of it on a longer one."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from fairstream.shields import GroupCounts, GroupShield, MonotoneEnergy, ShieldError, Target
from fairstream.shields.energy.group_violations import group_violations
from fairstream.shields.energy.placement import Placement


def enumerated(shield: GroupShield, p_a: float, p_b: float, share_a: float, horizon: int) -> tuple[float, float]:
    """(P_viol, E_viol) over [τ, T] by summing over every sequence of arrivals, raw decisions and flips, each step as
    `decide` takes it: a flip happens with the probability the verdict reports (ζ for an unfavoured decision)."""
    target = shield.target

    @functools.cache
    def walk(state: GroupCounts, violated: bool) -> tuple[float, float]:
        t = state.seen_a + state.seen_b
        if t == horizon:
            return 0.0, 0.0
        ever = count = 0.0
        for group, share, rate in (("a", share_a, p_a), ("b", 1 - share_a, p_b)):
            for raw, chance in ((1, rate), (0, 1 - rate)):
                flipping = shield.decide(raw, state, 0.0, group)  # u = 0 flips whenever ζ > 0
                outcomes = [(flipping.shielded, flipping.probability), (raw, 1 - flipping.probability)] if flipping.flipped else [(raw, 1.0)]
                for shielded, weight in outcomes:
                    if weight == 0:
                        continue
                    after = state.add(group == "a", shielded)
                    outside = t + 1 >= target.burn_in and target.outside(after.gap)
                    rest_ever, rest_count = walk(after, violated or outside)
                    w = share * chance * weight
                    ever += w * (1.0 if outside and not violated else rest_ever)
                    count += w * (outside + rest_count)
        return ever, count

    return walk(GroupCounts(), False)


@pytest.mark.parametrize(("p_a", "p_b", "share_a", "alpha"), [(0.6, 0.3, 0.5, 0.5), (0.8, 0.2, 0.3, 1.0), (0.4, 0.45, 0.6, 0.2)])
def test_the_programme_equals_every_path_of_the_shield_enumerated(p_a, p_b, share_a, alpha):
    target = Target(3, (-0.25, 0.25), (-0.1, 0.1))
    energy = MonotoneEnergy(p_a - p_b, target, alpha, domain=(-1.0, 1.0))
    exact = group_violations(energy, p_a, p_b, share_a, target, 9)
    probability, expected = enumerated(GroupShield(energy, target, placement=Placement.of(share_a, (p_a, p_b))), p_a, p_b, share_a, 9)
    assert (exact.probability, exact.expected) == pytest.approx((probability, expected), rel=1e-12, abs=1e-15)
    assert 0 < exact.probability < 1


def test_a_monte_carlo_of_the_shield_agrees_over_a_longer_horizon():
    target = Target(20, (-0.15, 0.15), (-0.05, 0.05))
    energy = MonotoneEnergy(0.3, target.settled(0.01), 0.5, domain=(-1.0, 1.0))
    exact = group_violations(energy, 0.6, 0.3, 0.5, target, 60)
    shield, rng, runs, hits = GroupShield(energy, target), np.random.default_rng(8), 2000, 0
    for _ in range(runs):
        state, violated = GroupCounts(), False
        for _step in range(60):
            first = rng.random() < 0.5
            verdict = shield.decide(int(rng.random() < (0.6 if first else 0.3)), state, float(rng.random()), "a" if first else "b")
            state = shield.next_state(state, verdict)
            violated |= verdict.violation
        hits += violated
    share = hits / runs
    assert share == pytest.approx(exact.probability, abs=4 * math.sqrt(exact.probability * (1 - exact.probability) / runs))


def test_inputs_are_checked():
    target = Target(5, (-0.2, 0.2), (-0.1, 0.1))
    with pytest.raises(ShieldError, match="need an energy on the domain"):
        group_violations(MonotoneEnergy(0.3, Target(5, (0.4, 0.6), (0.45, 0.55)), 0.5), 0.6, 0.3, 0.5, target, 10)
    with pytest.raises(ShieldError, match="horizon T must be an integer ≥ the burn-in τ = 5"):
        group_violations(MonotoneEnergy(0.3, target, 0.5, domain=(-1.0, 1.0)), 0.6, 0.3, 0.5, target, 4)
