"""Baseline shields (naive, FinHzn, Static-Fair, Dynamic): their guarantees hold on every run, exhaustively where the state
space allows and on seeded runs against biased decision makers otherwise; FinHzn's costs are the least the theory allows;
every shield is deterministic."""

from __future__ import annotations

import functools
import math
from collections import defaultdict

import numpy as np
import pytest

from fairstream.lab.periodic.arrivals import ArrivalModel, confidence_cost
from fairstream.lab.periodic.baseline import BAD_DRAW, UNKNOWN_GROUP, total
from fairstream.lab.periodic.finhzn import PAST_HORIZON, FinHznShield
from fairstream.lab.periodic.naive import NaiveParityShield, NaiveShield
from fairstream.lab.periodic.periods import Dynamic, PeriodState, StaticBW, StaticFair
from fairstream.shields.energy.shields import Counts, GroupCounts
from fairstream.shields.errors import ShieldError

KAPPA = 0.1
BIASED = ArrivalModel.bernoulli(0.5, 0.9, 0.1)


def phi(seen_a: int, ones_a: int, seen_b: int, ones_b: int) -> float:
    """Demographic-parity gap, written out again: |r_a − r_b|, 0 while a group is empty."""
    return abs(ones_a / seen_a - ones_b / seen_b) if seen_a and seen_b else 0.0


def stream(seed: int, n: int, share_a: float = 0.5, accept_a: float = 0.9, accept_b: float = 0.1) -> list[tuple[str, int, float, float]]:
    """Seeded candidates (group, proposed decision, score, u); the score sits on the side of 0.5 its decision says."""
    rng = np.random.default_rng(seed)
    groups = np.where(rng.random(n) < share_a, "a", "b")
    decisions = (rng.random(n) < np.where(groups == "a", accept_a, accept_b)).astype(int)
    scores = np.where(decisions == 1, 0.5 + 0.5 * rng.random(n), 0.5 * rng.random(n))
    return [(str(g), int(d), float(s), float(u)) for g, d, s, u in zip(groups, decisions, scores, rng.random(n), strict=True)]


def run(shield, items, scored: bool = False):
    """Shield a stream; the verdicts and the total flip cost (1 per flip, or the confidence cost when `scored`)."""
    state, verdicts, cost = shield.start(), [], 0.0
    for group, decision, score, u in items:
        flip_cost = confidence_cost(score) if scored else 1.0
        if isinstance(shield, NaiveParityShield):
            verdict = shield.decide(decision, state, u, group)
        else:
            verdict = shield.decide(decision, state, u, group, flip_cost)
        verdicts.append(verdict)
        cost += flip_cost * verdict.flipped
        state = shield.next_state(state, verdict)
    return verdicts, cost


def counts_of(items, verdicts) -> list[tuple[int, int, int, int]]:
    """Counts after each decision, rebuilt from the groups and the shielded decisions."""
    seen_a = ones_a = seen_b = ones_b = 0
    out = []
    for (group, *_), verdict in zip(items, verdicts, strict=True):
        if group == "a":
            seen_a, ones_a = seen_a + 1, ones_a + verdict.shielded
        else:
            seen_b, ones_b = seen_b + 1, ones_b + verdict.shielded
        out.append((seen_a, ones_a, seen_b, ones_b))
    return out


# ---------------------------------------------------------------- naive, one stream


@pytest.mark.parametrize("running", [(0.4, 0.6), (0.45, 0.55), (0.3, 0.5), (0.2, 0.25), (0.0, 0.1)])
def test_naive_burn_in_is_exact_over_every_run(running):
    shield = NaiveShield(running)
    low, high = running
    layer, outside_at = {Counts()}, []
    for t in range(1, shield.burn_in + 200):
        layer = {shield.next_state(s, shield.decide(x, s, 0.5)) for s in layer for x in (0, 1)}
        if any(not low <= s.ones / t <= high for s in layer):
            outside_at.append(t)
    assert max(outside_at, default=0) == shield.burn_in - 1


@pytest.mark.parametrize("p", [0.02, 0.5, 0.9, 1.0])
def test_naive_keeps_the_rate_in_the_target_after_burn_in(p):
    shield = NaiveShield((0.4, 0.6))
    for seed in range(40):
        rng = np.random.default_rng(seed)
        state = shield.start()
        for t in range(1, 400):
            decision = int(rng.random() < p)
            verdict = shield.decide(decision, state, float(rng.random()))
            kept_rate = (state.ones + decision) / t
            assert verdict.flipped == (kept_rate > 0.6 if decision else kept_rate < 0.4)
            state = shield.next_state(state, verdict)
            assert not verdict.violation
            if t >= shield.burn_in:
                assert 0.4 <= state.ones / t <= 0.6


# ---------------------------------------------------------------- naive, two groups


@pytest.mark.parametrize(("share_a", "accept_a", "accept_b"), [(0.5, 0.9, 0.1), (0.1, 0.9, 0.1), (0.5, 0.1, 0.95)])
def test_naive_parity_keeps_the_gap_in_the_target_once_settled(share_a, accept_a, accept_b):
    shield = NaiveParityShield((-KAPPA, KAPPA))
    for seed in range(30):
        items = stream(seed, 600, share_a, accept_a, accept_b)
        verdicts, _ = run(shield, items)
        settled = False
        for counts, verdict in zip(counts_of(items, verdicts), verdicts, strict=True):
            if settled:
                assert abs(verdict.after) <= KAPPA
            settled = settled or shield.settled(GroupCounts(*counts))
        assert settled


# ---------------------------------------------------------------- FinHzn


def trace_value(model: ArrivalModel, horizon: int, kappa: float, offset: tuple[int, int, int, int], fair=None) -> float:
    """Eqs. 3–4 evaluated on whole traces, without the counter abstraction (exponential: tiny horizons only). A trace
    ends fair when `fair(seen_a, ones_a, seen_b, ones_b)` says so (by default φ ≤ κ over offset and trace)."""
    weights = model.array()
    fair = fair or (lambda *counts: phi(*counts) <= kappa)

    @functools.cache
    def value(trace: tuple[tuple[int, int], ...]) -> float:
        if len(trace) == horizon:
            seen_a = offset[0] + sum(1 for g, _ in trace if g == 0)
            seen_b = offset[2] + sum(1 for g, _ in trace if g == 1)
            ones_a = offset[1] + sum(y for g, y in trace if g == 0)
            ones_b = offset[3] + sum(y for g, y in trace if g == 1)
            return 0.0 if fair(seen_a, ones_a, seen_b, ones_b) else math.inf
        out = 0.0
        for g in (0, 1):
            after = [value((*trace, (g, y))) for y in (0, 1)]
            if math.isinf(min(after)):
                return math.inf
            for r in (0, 1):
                for w, c in zip(weights[2 * g + r], model.costs, strict=True):
                    out += w * min(after[r], c + after[1 - r])
        return out

    return value(())


@pytest.mark.parametrize("horizon", [1, 2, 4, 6])
@pytest.mark.parametrize("kappa", [0.0, 0.2, 0.5])
@pytest.mark.parametrize("offset", [(0, 0, 0, 0), (3, 3, 2, 0)])
def test_finhzn_value_equals_the_trace_level_recursion(horizon, kappa, offset):
    model = ArrivalModel((0.1, 0.6), ((0.05, 0.1), (0.2, 0.15), (0.3, 0.05), (0.1, 0.05)))
    shield = FinHznShield(model, horizon, kappa, offset=GroupCounts(*offset))
    expected = trace_value(model, horizon, kappa, offset)
    assert shield.expected_cost == pytest.approx(expected, rel=1e-12) if math.isfinite(expected) else math.isinf(shield.expected_cost)


@pytest.mark.parametrize("kappa", [0.0, 0.1, 0.25])
def test_finhzn_is_fair_at_the_horizon_on_every_run(kappa):
    horizon = 16
    shield = FinHznShield(BIASED, horizon, kappa)
    layer = {shield.start()}
    for _ in range(horizon):
        layer = {
            shield.next_state(s, shield.decide(d, s, 0.5, g, c))
            for s in layer
            for g in "ab"
            for d in (0, 1)
            for c in (0.0, 0.3, 1.0, 100.0)
        }
    assert max(phi(s.seen_a, s.ones_a, s.seen_b, s.ones_b) for s in layer) <= kappa


def phi_zero(seen_a: int, ones_a: int, seen_b: int, ones_b: int) -> float:
    """The gap as the fairness-shield paper's code reads it: an empty group's rate is 0."""
    return abs((ones_a / seen_a if seen_a else 0.0) - (ones_b / seen_b if seen_b else 0.0))


@pytest.mark.parametrize("kappa", [0.0, 0.2])
def test_finhzn_reading_an_empty_group_as_rate_zero_is_fair_at_the_horizon_on_every_run(kappa):
    horizon = 8
    layers = {}
    for empty in ("zero", "vacuous"):
        shield = FinHznShield(BIASED, horizon, kappa, empty=empty)
        layer = {shield.start()}
        for _ in range(horizon):
            layer = {shield.next_state(s, shield.decide(d, s, 0.5, g, c)) for s in layer for g in "ab" for d in (0, 1) for c in (0.0, 0.3, 100.0)}
        layers[empty] = layer
    assert max(phi_zero(s.seen_a, s.ones_a, s.seen_b, s.ones_b) for s in layers["zero"]) <= kappa
    assert max(phi_zero(s.seen_a, s.ones_a, s.seen_b, s.ones_b) for s in layers["vacuous"]) > kappa  # all b, some accepted


SCENARIOS = {
    "as modelled": (BIASED, dict(accept_a=0.9, accept_b=0.1), False),
    "modelled fair, run biased": (ArrivalModel.bernoulli(0.5, 0.5, 0.5), dict(accept_a=0.9, accept_b=0.1), False),
    "bias reversed": (BIASED, dict(accept_a=0.05, accept_b=0.95), False),
    "small group a": (BIASED, dict(share_a=0.05, accept_a=0.9, accept_b=0.1), False),
    "confidence costs": (None, dict(accept_a=0.9, accept_b=0.1), True),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_finhzn_is_fair_at_the_horizon_on_simulated_runs(scenario):
    model, bias, scored = SCENARIOS[scenario]
    if model is None:
        sample = stream(999, 2000, **bias)
        model = ArrivalModel.estimate([g for g, *_ in sample], [d for _, d, *_ in sample], [confidence_cost(s) for *_, s, _ in sample])
    shield = FinHznShield(model, 50, KAPPA)
    for seed in range(150):
        items = stream(seed, 50, **bias)
        verdicts, _ = run(shield, items, scored)
        assert phi(*counts_of(items, verdicts)[-1]) <= KAPPA
        assert not any(v.violation for v in verdicts)


def test_finhzn_mean_cost_matches_its_expected_cost():
    shield = FinHznShield(BIASED, 30, KAPPA)
    costs = np.array([run(shield, stream(seed, 30))[1] for seed in range(3000)])
    assert abs(costs.mean() - shield.expected_cost) <= 4 * costs.std(ddof=1) / math.sqrt(len(costs))


def naive_is_fair_and_its_expected_cost(model: ArrivalModel, horizon: int) -> tuple[bool, float]:
    """Whether the naive parity shield ends every run of `horizon` with φ ≤ κ, and its exact expected cost under θ."""
    shield = NaiveParityShield((-KAPPA, KAPPA))
    weights, costs = model.array(), np.array(model.costs)
    layer, expected = {shield.start(): 1.0}, 0.0
    for _ in range(horizon):
        following = defaultdict(float)
        for state, p in layer.items():
            for g, group in enumerate("ab"):
                for r in (0, 1):
                    verdict = shield.decide(r, state, 0.5, group)
                    w = weights[2 * g + r]
                    expected += p * verdict.flipped * float(w @ costs)
                    following[shield.next_state(state, verdict)] += p * float(w.sum())
        layer = following
    return all(phi(s.seen_a, s.ones_a, s.seen_b, s.ones_b) <= KAPPA for s in layer), expected


@pytest.mark.parametrize("scored", [False, True])
def test_finhzn_costs_no_more_than_the_naive_shield(scored):
    horizon = 30
    sample = stream(999, 2000)
    costs = [confidence_cost(s) for *_, s, _ in sample] if scored else None
    model = ArrivalModel.estimate([g for g, *_ in sample], [d for _, d, *_ in sample], costs)
    fair, naive_expected = naive_is_fair_and_its_expected_cost(model, horizon)
    shield = FinHznShield(model, horizon, KAPPA)
    assert fair  # the naive shield is one of the fair shields FinHzn is optimal among (Thm 1)
    assert shield.expected_cost <= naive_expected
    naive = NaiveParityShield((-KAPPA, KAPPA))
    same_streams = [stream(seed, horizon) for seed in range(300)]
    assert sum(run(shield, s, scored)[1] for s in same_streams) <= sum(run(naive, s, scored)[1] for s in same_streams)


# ---------------------------------------------------------------- periodic


def period_ends(items, verdicts, period: int):
    """(counts of each period alone, counts of everything so far) at every period end."""
    cumulative = counts_of(items, verdicts)
    out, start = [], (0, 0, 0, 0)
    for end in range(period, len(items) + 1, period):
        overall = cumulative[end - 1]
        out.append((tuple(x - y for x, y in zip(overall, start, strict=True)), overall))
        start = overall
    return out


def test_static_fair_makes_every_period_fair():
    shield = StaticFair(BIASED, period=40, kappa=KAPPA)
    for seed in range(25):
        items = stream(seed, 8 * 40, share_a=0.3)
        verdicts, _ = run(shield, items)
        assert all(phi(*alone) <= KAPPA for alone, _ in period_ends(items, verdicts, 40))


def test_static_fair_periods_can_be_fair_while_their_concatenation_is_not():
    period = 10
    items = [("a", 0, 0.1, 0.5)] + [("b", 0, 0.1, 0.5)] * (period - 1) + [("a", 1, 0.9, 0.5)] * (period - 1) + [("b", 1, 0.9, 0.5)]
    model = ArrivalModel.bernoulli(0.5, 0.5, 0.5)
    verdicts, _ = run(StaticFair(model, period, KAPPA), items)
    ends = period_ends(items, verdicts, period)
    assert [phi(*alone) for alone, _ in ends] == [0.0, 0.0]
    assert phi(*ends[-1][1]) == pytest.approx(1 - 2 / period)
    verdicts, _ = run(Dynamic(model, period, KAPPA), items)
    assert all(phi(*overall) <= KAPPA for _, overall in period_ends(items, verdicts, period))


def check_dynamic(period: int, periods: int, seeds: range, share_a: float) -> None:
    shield = Dynamic(BIASED, period=period, kappa=KAPPA)
    for seed in seeds:
        items = stream(seed, periods * period, share_a=share_a)
        state, verdicts = shield.start(), []
        for group, decision, _, u in items:
            if total(state.within) == 0:
                assert shield.assumption_holds(state)
            verdicts.append(shield.decide(decision, state, u, group))
            state = shield.next_state(state, verdicts[-1])
        assert all(phi(*overall) <= KAPPA for _, overall in period_ends(items, verdicts, period))


@pytest.mark.parametrize("horizon", [4, 6, 7])
@pytest.mark.parametrize("welfare", [(0.25, 0.75), (0.4, 0.7)])
def test_static_bw_value_equals_the_trace_level_recursion(horizon, welfare):
    model = ArrivalModel((0.1, 0.6), ((0.05, 0.1), (0.2, 0.15), (0.3, 0.05), (0.1, 0.05)))
    shield = StaticBW(model, horizon, kappa=0.5, welfare=welfare)
    low, high = welfare
    least = math.ceil(1 / (high - low) - 1e-9)

    def balanced_within(seen_a, ones_a, seen_b, ones_b):  # Def. 5: not N-balanced, or both rates in [l, u]
        return min(seen_a, seen_b) < least or (low <= ones_a / seen_a <= high and low <= ones_b / seen_b <= high)

    expected = trace_value(model, horizon, 0.5, (0, 0, 0, 0), fair=balanced_within)
    assert shield.shield.expected_cost == pytest.approx(expected, rel=1e-12) if math.isfinite(expected) else math.isinf(shield.shield.expected_cost)


def test_static_bw_keeps_every_balanced_period_and_the_whole_history_within_its_bounds():
    """Thm 4: rates in [l, u] in each N-balanced period, so φ ≤ u − l ≤ κ over the history while every period is balanced."""
    shield = StaticBW(ArrivalModel.bernoulli(0.5, 0.7, 0.3), period=40, kappa=0.2)
    low, high = shield.welfare
    checked = 0
    for seed in range(25):
        items = stream(seed, 8 * 40, accept_a=0.7, accept_b=0.3)
        verdicts, _ = run(shield, items)
        for alone, overall in period_ends(items, verdicts, 40):
            if min(alone[0], alone[2]) < shield.balance:
                break  # Assumption 1 fails from here on: no promise for this period or the history
            assert low <= alone[1] / alone[0] <= high and low <= alone[3] / alone[2] <= high
            assert phi(*overall) <= 0.2 + 1e-12
            checked += 1
    assert checked > 150


def test_dynamic_makes_the_whole_history_fair_at_every_period_end():
    check_dynamic(period=25, periods=6, seeds=range(6), share_a=0.3)


@pytest.mark.slow
def test_dynamic_over_longer_periods():
    check_dynamic(period=50, periods=10, seeds=range(20), share_a=0.5)


def test_dynamic_stands_aside_when_no_shield_can_repair_the_history():
    shield = Dynamic(BIASED, period=10, kappa=KAPPA)
    state = PeriodState(10, before=GroupCounts(100, 100, 100, 0))
    assert not shield.assumption_holds(state)
    verdicts = []
    for group, decision, _, u in stream(3, 10):
        verdicts.append(shield.decide(decision, state, u, group))
        state = shield.next_state(state, verdicts[-1])
    assert not any(v.flipped for v in verdicts) and verdicts[-1].violation


# ---------------------------------------------------------------- determinism, models, errors


def test_shields_are_deterministic():
    items = stream(11, 200)
    for build in (
        lambda: NaiveParityShield((-KAPPA, KAPPA)),
        lambda: StaticFair(BIASED, 40, KAPPA),
        lambda: Dynamic(BIASED, 40, KAPPA),
    ):
        assert run(build(), items) == run(build(), items)
    first, second = FinHznShield(BIASED, 40, KAPPA), FinHznShield(BIASED, 40, KAPPA)
    assert all(np.array_equal(x, y) for x, y in zip(first.values, second.values, strict=True))


def test_group_names_only_label_the_pair():
    items = stream(12, 120, share_a=0.4)
    renamed = [("men" if g == "a" else "women", d, s, u) for g, d, s, u in items]
    named = StaticFair(BIASED, 40, KAPPA, groups=("men", "women"))
    assert [v.shielded for v in run(named, renamed)[0]] == [v.shielded for v in run(StaticFair(BIASED, 40, KAPPA), items)[0]]


def test_estimated_model_recovers_the_sample_frequencies():
    items = stream(5, 4000, share_a=0.3)
    model = ArrivalModel.estimate([g for g, *_ in items], [d for _, d, *_ in items])
    rows = np.array(model.weights)[:, 0]
    assert rows == pytest.approx([0.3 * 0.1, 0.3 * 0.9, 0.7 * 0.9, 0.7 * 0.1], abs=0.02)
    scored = ArrivalModel.estimate([g for g, *_ in items], [d for _, d, *_ in items], [confidence_cost(s) for *_, s, _ in items])
    assert scored.costs == pytest.approx([0.025 + 0.05 * i for i in range(10)])
    assert np.array(scored.weights).sum(axis=1) == pytest.approx(rows)


def test_errors_say_what_was_wrong():
    shield = FinHznShield(BIASED, 5, KAPPA)
    with pytest.raises(ShieldError) as error:
        shield.decide(1, GroupCounts(), 0.5, "c")
    assert str(error.value) == UNKNOWN_GROUP.format(group="c", known="a, b")
    with pytest.raises(ShieldError) as error:
        shield.decide(1, GroupCounts(), 1.0, "a")
    assert str(error.value) == BAD_DRAW.format(u=1.0)
    with pytest.raises(ShieldError) as error:
        shield.decide(1, GroupCounts(3, 1, 2, 0), 0.5, "a")
    assert str(error.value) == PAST_HORIZON.format(total=5, horizon=5)


@pytest.mark.slow
def test_finhzn_synthesis_at_horizon_100_with_confidence_costs():
    sample = stream(999, 2000)
    model = ArrivalModel.estimate([g for g, *_ in sample], [d for _, d, *_ in sample], [confidence_cost(s) for *_, s, _ in sample])
    shield = FinHznShield(model, 100, KAPPA)
    assert [len(layer) for layer in shield.values] == [(t + 1) * (t + 2) * (t + 3) // 6 for t in range(101)]
    for seed in range(100):
        items = stream(seed, 100)
        verdicts, _ = run(shield, items, scored=True)
        assert phi(*counts_of(items, verdicts)[-1]) <= KAPPA
