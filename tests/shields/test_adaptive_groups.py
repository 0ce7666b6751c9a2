"""The adaptive two-group shield: with the raw gap unknown it still settles inside L when a fixed shield told the wrong
gap does not, when the raw rates drift, and it leaves a gap already inside L where it is."""

from __future__ import annotations

import numpy as np
import pytest

from fairstream.shields import AdaptiveGroupShield, GroupCounts, GroupShield, MonotoneEnergy, Target

TARGET = Target(50, running=(-0.1, 0.1), limit=(-0.05, 0.05))


def run(shield, rates, steps: int, runs: int, seed: int, share_a: float = 0.5) -> np.ndarray:
    """Final gaps D of `runs` streams: group a arrives with probability `share_a`; `rates(t)` gives (p_a, p_b) at step t."""
    rng = np.random.default_rng(seed)
    finals = []
    for _ in range(runs):
        state = shield.start()
        arrivals, draws, flips = rng.random(steps), rng.random(steps), rng.random(steps)
        for t in range(steps):
            p_a, p_b = rates(t)
            group = "a" if arrivals[t] < share_a else "b"
            decision = int(draws[t] < (p_a if group == "a" else p_b))
            verdict = shield.decide(decision, state, float(flips[t]), group)
            state = shield.next_state(state, verdict)
        finals.append((state.counts if hasattr(state, "counts") else state).gap)
    return np.array(finals)


def inside(finals: np.ndarray) -> float:
    low, high = TARGET.limit
    return float(((finals >= low) & (finals <= high)).mean())


def test_a_wrong_raw_gap_leaves_a_fixed_shield_outside_l_and_the_adaptive_one_inside():
    """True gap 0.45 (0.75 vs 0.30); the fixed shield was told 0.3."""
    fixed = GroupShield(MonotoneEnergy(0.3, TARGET.settled(0.01), 0.5, domain=(-1.0, 1.0)), TARGET)
    adaptive = AdaptiveGroupShield(TARGET, alpha=0.5)
    rates = lambda t: (0.75, 0.30)  # noqa: E731
    told_wrong, estimated = run(fixed, rates, 6000, 24, seed=1), run(adaptive, rates, 6000, 24, seed=1)
    assert inside(told_wrong) < 0.3 and np.median(told_wrong) > 0.05
    assert inside(estimated) >= 0.9


def test_drifting_raw_rates_still_settle_inside_l():
    """Group a's rate rises from 0.55 to 0.80 after 2,000 decisions, group b's falls from 0.35 to 0.25: the raw gap
    goes from 0.2 to 0.55, and a fixed shield for the first gap would settle above L (as in the test above)."""
    adaptive = AdaptiveGroupShield(TARGET, alpha=0.5)
    finals = run(adaptive, lambda t: (0.55, 0.35) if t < 2000 else (0.80, 0.25), 8000, 24, seed=2)
    assert inside(finals) >= 0.85 and TARGET.limit[0] < np.median(finals) < TARGET.limit[1]


@pytest.mark.parametrize("gap", [0.0, 0.03])
def test_a_gap_already_inside_l_is_not_widened(gap):
    adaptive = AdaptiveGroupShield(TARGET, alpha=0.5)
    rates = lambda t: (0.4 + gap, 0.4)  # noqa: E731
    shielded, raw = run(adaptive, rates, 4000, 24, seed=3), run(GroupShield(MonotoneEnergy(0.0, Target(50, (-0.1, 0.1), (-0.05, 0.05)), 0.0, domain=(-1.0, 1.0)), TARGET), rates, 4000, 24, seed=3)
    assert np.abs(shielded - gap).mean() <= np.abs(raw - gap).mean() + 0.005
    assert inside(shielded) >= 0.9


def test_the_estimate_and_its_member():
    shield = AdaptiveGroupShield(TARGET, alpha=0.5, groups=("men", "women"))
    state = shield.start()
    for group, decision in [("men", 1), ("men", 1), ("women", 0), ("men", 0), ("women", 1)]:
        state = shield.next_state(state, shield.decide(decision, state, 0.99, group))
    assert (state.counts.seen_a, state.counts.seen_b) == (3, 2)
    assert shield.estimate(state) == pytest.approx(2.5 / 4 - 1.5 / 3)  # (raw 1s + ½)/(n + 1) per group
    assert shield.energy(state).limit_point == pytest.approx(0.04)  # 0.125 > L: pushed down to L's upper end, settled 0.01 inside
    assert isinstance(state.counts, GroupCounts)


def test_after_its_memory_the_estimate_follows_a_change():
    """Memory 10: the first ten decisions are averaged, later ones weigh 1/12 each, so a run of 1s pulls the rate up."""
    shield = AdaptiveGroupShield(TARGET, alpha=0.5, memory=10)
    state = shield.start()
    for decision in [0] * 40 + [1] * 40:
        state = shield.next_state(state, shield.decide(decision, state, 0.99, "a"))
    expected = 0.5
    for n, decision in enumerate([0] * 40 + [1] * 40):
        expected += (decision - expected) / (min(n, 10) + 2)
    assert state.rate_a == pytest.approx(expected) and state.rate_a > 0.95
