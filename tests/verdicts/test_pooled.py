"""The pooled test of many pairs: at the threshold it rises no more often than α, however the pairs share groups; it
uses every outcome of uneven groups; and when many pairs drift together it rises before any pair's own test does."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from fairstream.estimators.betting import GapBet
from fairstream.estimators.pairing import RatioPairs
from fairstream.verdicts.many_pairs.pooled import PooledBet

EPSILON, ALPHA = 0.1, 0.05


def pooled_over(groups: list[str]) -> PooledBet:
    pooled = PooledBet()
    for a, b in combinations(groups, 2):
        pooled.add_pair((a, b), GapBet(EPSILON).violation_rows())
    return pooled


def test_at_the_threshold_it_rises_no_more_often_than_alpha():
    """Four groups, two ε above the other two: four pairs at the threshold, two at 0, every pair sharing a group."""
    groups, rate = ["a", "b", "c", "d"], {"a": 0.55, "b": 0.55, "c": 0.45, "d": 0.45}
    streams, risen = 300, 0
    for seed in range(streams):
        rng = np.random.default_rng(seed)
        pooled = pooled_over(groups)
        chosen, draws = rng.integers(0, 4, 2000), rng.random(2000)
        for index, draw in zip(chosen.tolist(), draws.tolist()):
            pooled.push(groups[index], float(draw < rate[groups[index]]))
        risen += pooled.peak >= math.log(1 / ALPHA)
    assert risen / streams <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / streams)


def test_uneven_groups_give_every_outcome_to_a_round():
    pooled = pooled_over(["a", "b", "c"])
    rng = np.random.default_rng(1)
    shares = {"a": 0.7, "b": 0.2, "c": 0.1}
    names = rng.choice(list(shares), 20_000, p=list(shares.values()))
    for name in names:
        pooled.push(str(name), 1.0)
    assert max(pooled.waiting.values()) <= 16  # nothing piles up: every outcome meets a round, a few rounds late at most
    assert pooled.rounds >= 0.9 * int((names == "c").sum())  # about a round per outcome of the smallest group


def test_many_pairs_drifting_together_raise_it_well_before_the_pairs_own_tests():
    """Twelve groups, half ε + 0.05 above the others: 36 of 66 pairs beyond ε. Each pair's own test at α/66 (as a
    monitor tests it) against the pooled test at α/2 (its half of the merged alarm): medians over six streams."""
    groups = [f"g{index}" for index in range(12)]
    rate = {group: 0.575 if index < 6 else 0.425 for index, group in enumerate(groups)}
    pooled_times, pair_times = [], []
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        pooled, bets = pooled_over(groups), {pair: GapBet(EPSILON) for pair in combinations(groups, 2)}
        pairings = {pair: RatioPairs() for pair in bets}
        pooled_at = pair_at = None
        for step in range(40_000):
            group = groups[int(rng.integers(0, 12))]
            outcome = float(rng.random() < rate[group])
            pooled.push(group, outcome)
            for pair, bet in bets.items():
                if group in pair:
                    for x, y in pairings[pair].push(group == pair[0], outcome):
                        bet.update(x, y)
            if pooled_at is None and pooled.peak >= math.log(2 / ALPHA):
                pooled_at = step
            if pair_at is None and any(bets[pair].rejects(ALPHA / 66) for pair in bets if group in pair):
                pair_at = step
            if pooled_at is not None and pair_at is not None:
                break
        pooled_times.append(pooled_at if pooled_at is not None else math.inf)
        pair_times.append(pair_at if pair_at is not None else math.inf)
    assert np.median(pooled_times) <= 0.75 * np.median(pair_times), (pooled_times, pair_times)
