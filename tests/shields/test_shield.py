"""The shields at run time: deterministic given (seed, id), the same chain as the theory, and the two-group and adaptive variants."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fairstream.shields import (
    AdaptiveShield,
    EnergyShield,
    GroupShield,
    MonotoneEnergy,
    ShieldError,
    Target,
    fixpoint,
    group_interference,
    uniform,
)
from fairstream.shields.energy.shields import AdaptiveCounts, Counts, GroupCounts
from tests.shields.chain import simulate

TARGET = Target(50, running=(0.4, 0.6), limit=(0.45, 0.55))
GAP = Target(50, running=(-0.1, 0.1), limit=(-0.05, 0.05))


def run(shield, decisions, seed: int):
    """Shield a sequence of raw decisions with draws from (seed, index); return the verdicts and the final state."""
    state, verdicts = shield.start(), []
    for index, decision in enumerate(decisions):
        verdict = shield.decide(int(decision), state, uniform(seed, f"d-{index}"))
        verdicts.append(verdict)
        state = shield.next_state(state, verdict)
    return verdicts, state


def test_uniform_is_a_deterministic_uniform_draw():
    draws = np.array([uniform(3, f"id-{i}") for i in range(20_000)])
    assert np.all((draws >= 0) & (draws < 1))
    assert stats.kstest(draws, "uniform").pvalue > 1e-3
    assert [uniform(3, f"id-{i}") for i in range(5)] == list(draws[:5])
    assert uniform(3, "id-0") != uniform(4, "id-0") and uniform(3, "id-0") != uniform(3, "id-1")


def test_decide_is_deterministic_given_seed_and_ids():
    shield = EnergyShield(MonotoneEnergy(0.3, TARGET, 0.5), TARGET)
    decisions = np.random.default_rng(0).random(3_000) < 0.3
    first, state = run(shield, decisions, seed=42)
    again, _ = run(shield, decisions, seed=42)
    other, _ = run(shield, decisions, seed=43)
    assert first == again
    assert [v.shielded for v in first] != [v.shielded for v in other]
    assert state == Counts(3_000, sum(v.shielded for v in first))


def test_decide_follows_the_same_chain_as_the_vectorized_simulation():
    zeta, p = MonotoneEnergy(0.3, TARGET, 0.4), 0.3
    steps, rng = 2_000, np.random.default_rng(9)
    raw, draws = np.empty(steps), np.empty(steps)
    for t in range(steps):  # the simulation's order of draws for one run
        raw[t], draws[t] = rng.random() < p, rng.random()
    shield, state, flips = EnergyShield(zeta, TARGET), Counts(), 0
    for t in range(steps):
        verdict = shield.decide(int(raw[t]), state, float(draws[t]))
        flips += verdict.flipped
        state = shield.next_state(state, verdict)
    result = simulate(zeta, p, TARGET, steps, runs=1, rng=np.random.default_rng(9))
    assert state.ones / steps == result.fairness[0]
    assert flips / steps == result.interference[0]


def test_a_verdict_says_what_happened_and_why():
    zeta = MonotoneEnergy(0.3, TARGET, 0.5)
    shield = EnergyShield(zeta, TARGET)
    first = shield.decide(0, Counts(), u=0.0)
    assert (first.shielded, first.flipped, first.probability, first.before) == (0, False, 0.0, zeta.pivot)
    assert first.reason == "kept: no decisions yet, and F_0 is taken to be the pivot 0.6"
    flipped = shield.decide(0, Counts(10, 2), u=0.1)
    assert (flipped.shielded, flipped.flipped, flipped.before, flipped.after) == (1, True, 0.2, 3 / 11)
    assert flipped.probability == pytest.approx(zeta(0.2))
    assert flipped.reason == "flipped: F_t = 0.2 < pivot 0.6 favours 1; u = 0.1 < ζ = 0.6071"
    spared = shield.decide(0, Counts(10, 2), u=0.9)
    assert (spared.shielded, spared.flipped, spared.probability) == (0, False, flipped.probability)
    favoured = shield.decide(1, Counts(10, 2), u=0.0)
    assert (favoured.shielded, favoured.probability) == (1, 0.0)
    high = shield.decide(1, Counts(10, 8), u=0.0)
    assert (high.shielded, high.flipped) == (0, True)  # above the pivot the shield favours 0
    assert shield.decide(1, Counts(10, 6), u=0.0).reason == "kept: F_t = 0.6 is at the pivot, where ζ = 0"


def test_violation_counts_only_from_the_burn_in():
    shield = EnergyShield(MonotoneEnergy(0.3, TARGET, 0.0), TARGET)
    assert not shield.decide(0, Counts(10, 0), u=0.99).violation  # t + 1 = 11 < τ
    assert shield.decide(0, Counts(60, 0), u=0.99).violation
    assert not shield.decide(0, Counts(59, 30), u=0.99).violation


def test_decide_checks_its_inputs():
    shield = EnergyShield(MonotoneEnergy(0.3, TARGET, 0.5), TARGET)
    with pytest.raises(ShieldError, match="decision must be 0 or 1; got 2"):
        shield.decide(2, Counts(), 0.5)
    with pytest.raises(ShieldError, match=r"u must lie in \[0, 1\); got 1.0"):
        shield.decide(1, Counts(), 1.0)
    with pytest.raises(ShieldError, match="counts must be integers with 0 ≤ ones ≤ seen"):
        Counts(3, 4)
    with pytest.raises(ShieldError, match="needs an energy on the domain"):
        EnergyShield(MonotoneEnergy(0.3, GAP, 0.5, domain=(-1.0, 1.0)), TARGET)


def _two_groups(shield: GroupShield, steps: int, share: float, rates: dict[str, float], seed: int):
    rng = np.random.default_rng(seed)
    state, flips = shield.start(), 0
    for index in range(steps):
        group = shield.groups[0] if rng.random() < share else shield.groups[1]
        decision = int(rng.random() < rates[group])
        verdict = shield.decide(decision, state, uniform(seed, f"c-{index}"), group)
        flips += verdict.flipped
        state = shield.next_state(state, verdict)
    return state, flips / steps


def test_the_two_group_shield_reduces_the_parity_gap_to_its_limit_point():
    share, rates = 0.5, {"women": 0.6, "men": 0.3}
    zeta = MonotoneEnergy(0.3, GAP, alpha=0.5, domain=(-1.0, 1.0))
    shield = GroupShield(zeta, GAP, groups=("women", "men"))
    point = fixpoint(zeta, 0.3)
    assert point == pytest.approx(0.05)
    runs = [_two_groups(shield, 5_000, share, rates, seed) for seed in range(8)]
    gaps = np.array([state.gap for state, _ in runs])
    assert np.all(np.abs(gaps) < 0.15)  # the raw gap is 0.3
    assert abs(gaps.mean() - point) < 0.02
    flips = np.mean([rate for _, rate in runs])
    assert flips == pytest.approx(group_interference(zeta, share, 0.6, 0.3), abs=0.01)
    assert flips <= abs(point - 0.3) + 0.01  # Lemma A.10


def test_the_two_group_verdict_names_the_group():
    shield = GroupShield(MonotoneEnergy(0.3, GAP, 0.5, domain=(-1.0, 1.0)), GAP)
    verdict = shield.decide(0, GroupCounts(10, 6, 10, 3), u=0.1, group="b")
    assert (verdict.shielded, verdict.group) == (1, "b")  # above the pivot group b is favoured to accept
    assert verdict.reason.startswith("flipped: D_t = 0.3 > pivot -0.1 favours 1 in group b; ")
    assert shield.next_state(GroupCounts(10, 6, 10, 3), verdict) == GroupCounts(10, 6, 11, 4)
    with pytest.raises(ShieldError) as error:
        shield.decide(0, GroupCounts(), 0.1, group="x")
    assert str(error.value) == "unknown group 'x'; known groups: a, b"


def _adaptive(shield: AdaptiveShield, p: float, steps: int, seed: int) -> AdaptiveCounts:
    decisions = np.random.default_rng(seed).random(steps) < p
    return run(shield, decisions, seed)[1]


@pytest.mark.parametrize(("p", "limit"), [(0.3, 0.45), (0.5, 0.5), (0.75, 0.55)])
def test_the_adaptive_shield_reaches_the_limit_point_without_knowing_p(p, limit):
    shield = AdaptiveShield(TARGET, alpha=0.5)
    states = [_adaptive(shield, p, 5_000, seed) for seed in range(6)]
    fairness = np.array([state.ones / state.seen for state in states])
    assert abs(fairness.mean() - limit) < 0.01
    assert np.all(np.abs(fairness - limit) < 0.03)
    assert all(abs(shield.estimate(state) - p) < 0.03 for state in states)


def test_the_adaptive_shield_needs_l_strictly_inside_s():
    with pytest.raises(ShieldError, match="needs L strictly inside S"):
        AdaptiveShield(Target(50, (0.4, 0.6), (0.4, 0.55)), alpha=0.5)
