"""Equal opportunity shields: the FinHzn programme over the qualified against a recursion over whole histories, its
guarantee on every run, the periodic shields over many periods, and the energy shield on the qualified settling the TPR
gap where the theory puts it."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from fairstream.lab.periodic import ArrivalModel
from fairstream.lab.periodic.finhzn import parity_gap
from fairstream.lab.periodic.opportunity import OpportunityShield
from fairstream.lab.periodic.opportunity_finhzn import OpportunityFinHzn, OpportunityPeriodic
from fairstream.shields import GroupCounts, GroupShield, MonotoneEnergy, Target

ROWS = (("a", 0), ("a", 1), ("b", 0), ("b", 1))


def tpr_gap(history, empty: str) -> float:
    """|TPR_a − TPR_b| over the history's qualified; 0 while a group has none, or with `empty="zero"` its TPR read as 0."""
    rates = {}
    for group in ("a", "b"):
        decisions = [decision for g, decision, label in history if g == group and label]
        rates[group] = sum(decisions) / len(decisions) if decisions else None
    if None in rates.values() and empty == "vacuous":
        return 0.0
    return abs((rates["a"] or 0.0) - (rates["b"] or 0.0))


def least_cost(model: ArrivalModel, qualified, horizon: int, kappa: float, empty: str = "vacuous") -> float:
    """The least expected flip cost by recursion over whole histories of (group, shielded decision, label), with the
    same adversarial reading: ∞ when some arrival leaves no way to end with a TPR gap ≤ κ."""
    weights = model.array()

    @functools.cache
    def walk(history: tuple[tuple[str, int, int], ...]) -> float:
        if len(history) == horizon:
            return 0.0 if tpr_gap(history, empty) <= kappa + 1e-12 else math.inf
        value = 0.0
        for group in ("a", "b"):
            options = {y: [walk((*history, (group, y, z))) for z in (0, 1)] for y in (0, 1)}
            if not any(all(math.isfinite(v) for v in options[y]) for y in (0, 1)):
                return math.inf
        for row, (group, proposed) in enumerate(ROWS):
            chance = qualified[row]

            def expected(y: int, group: str = group, chance: float = chance) -> float:
                qualified_part = chance * walk((*history, (group, y, 1))) if chance else 0.0
                return qualified_part + ((1 - chance) * walk((*history, (group, y, 0))) if chance < 1 else 0.0)

            for level, cost in enumerate(model.costs):
                value += weights[row][level] * min(expected(proposed), cost + expected(1 - proposed))
        return value

    return walk(())


@pytest.mark.parametrize(
    ("model", "qualified", "kappa"),
    [
        (ArrivalModel.bernoulli(0.5, 0.8, 0.3), (0.2, 0.7, 0.25, 0.6), 0.3),
        (ArrivalModel.bernoulli(0.3, 0.6, 0.5, cost=0.5), (0.1, 0.9, 0.4, 0.5), 0.0),
    ],
)
@pytest.mark.parametrize("empty", ["vacuous", "zero"])
def test_the_programme_over_counters_is_the_recursion_over_histories(model, qualified, kappa, empty):
    shield = OpportunityFinHzn(model, qualified, horizon=5, kappa=kappa, empty=empty)
    assert shield.expected_cost == pytest.approx(least_cost(model, qualified, 5, kappa, empty), rel=1e-12)


def _stream(rng: np.random.Generator, n: int, share: float, rates, qualified):
    """(group, proposed, label) triples: the label drawn given the group and the proposal, as the shields assume."""
    out = []
    for _ in range(n):
        group = "a" if rng.random() < share else "b"
        proposed = int(rng.random() < rates[group])
        label = int(rng.random() < qualified[(0 if group == "a" else 2) + proposed])
        out.append((group, proposed, label))
    return out


def test_every_run_ends_its_horizon_with_a_tpr_gap_within_kappa():
    qualified = (0.2, 0.8, 0.3, 0.7)
    shield = OpportunityFinHzn(ArrivalModel.bernoulli(0.5, 0.7, 0.3), qualified, horizon=30, kappa=0.15)
    rng = np.random.default_rng(3)
    flips = 0
    for _ in range(200):
        state = shield.start()
        for group, proposed, label in _stream(rng, 30, 0.5, {"a": 0.7, "b": 0.3}, qualified):
            verdict = shield.decide(proposed, state, 0.5, group)
            flips += verdict.flipped
            state = shield.next_state(state, verdict, label)
        assert parity_gap(state.qualified) <= 0.15 + 1e-12
    assert flips > 0


@pytest.mark.parametrize("kind", ["static-fair", "static-bw", "dynamic"])
def test_periodic_opportunity_shields_end_periods_fair_over_the_history(kind):
    qualified = (0.2, 0.8, 0.3, 0.7)
    shield = OpportunityPeriodic(ArrivalModel.bernoulli(0.5, 0.7, 0.3), qualified, period=20, kappa=0.2, kind=kind)
    rng = np.random.default_rng(5)
    fair_ends, ends = 0, 0
    raw_fair = 0
    for _ in range(15):
        state, raw = shield.start(), GroupCounts()
        for index, (group, proposed, label) in enumerate(_stream(rng, 200, 0.5, {"a": 0.7, "b": 0.3}, qualified)):
            verdict = shield.decide(proposed, state, 0.5, group)
            state = shield.next_state(state, verdict, label)
            raw = raw.add(group == "a", proposed) if label else raw
            if (index + 1) % 20 == 0:
                ends += 1
                fair_ends += parity_gap(state.before) <= 0.2 + 1e-12
                raw_fair += parity_gap(raw) <= 0.2 + 1e-12
    if kind == "dynamic":
        assert fair_ends == ends  # conditioned on the history: fair at every period end whenever it can be
    assert fair_ends / ends > raw_fair / ends + 0.3


def test_the_energy_shield_on_the_qualified_settles_the_tpr_gap_at_its_limit_point():
    """Raw TPRs 0.9 and 0.5: the member for the raw TPR gap 0.4 sends the TPR gap to L's upper end moved 0.01 inside."""
    target = Target(50, (-0.1, 0.1), (-0.05, 0.05))
    shield = OpportunityShield(GroupShield(MonotoneEnergy(0.4, target.settled(0.01), 0.8, domain=(-1.0, 1.0)), target))
    rng = np.random.default_rng(11)
    gaps, unqualified_flips = [], 0
    for _ in range(20):
        state = shield.start()
        for _ in range(6000):
            group = "a" if rng.random() < 0.4 else "b"
            label = int(rng.random() < 0.5)
            proposed = int(rng.random() < ((0.9 if group == "a" else 0.5) if label else 0.3))
            verdict = shield.decide(proposed, state, float(rng.random()), group)
            unqualified_flips += verdict.flipped and not label
            state = shield.next_state(state, verdict, label)
        gaps.append(state.gap)
    assert np.mean(gaps) == pytest.approx(0.04, abs=0.01)
    assert unqualified_flips > 0  # the shield decides before the label: it pays for flips that turn out not to count
