"""The betting gap test: false alarms under continuous monitoring, power, pairing, pickling; all seeded."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from fairstream.estimators import GapBet, PairQueue, log_wealth_paths
from fairstream.estimators.betting import BAD_EPSILON, BAD_OUTCOME

ALPHA = 0.05
THRESHOLD = math.log(2 / ALPHA)  # each side at α/2


def bernoulli_pairs(p_a: float, p_b: float, runs: int, pairs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.random((runs, pairs)) < p_a).astype(float), (rng.random((runs, pairs)) < p_b).astype(float)


def wealth_paths(x: np.ndarray, y: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Log-wealth against H0⁺ and H0⁻ after every pair, for every run at once."""
    above, below = log_wealth_paths(np.stack([x - y - epsilon, y - x - epsilon]))
    return above, below


def test_the_class_makes_the_same_bets_and_verdicts_as_the_vectorized_paths():
    x, y = bernoulli_pairs(0.6, 0.4, runs=5, pairs=400, seed=1)
    above, below = wealth_paths(x, y, 0.05)
    for run in range(5):
        bet = GapBet(0.05)
        expected = None  # a rejection stands once made: Ville's inequality bounds the running maximum
        for k in range(400):
            bet.update(x[run, k], y[run, k])
            assert bet.get() == pytest.approx((above[run, k], below[run, k]), rel=1e-12, abs=1e-12)
            if expected is None:
                expected = "a>b" if above[run, k] >= THRESHOLD else "b>a" if below[run, k] >= THRESHOLD else None
            assert bet.rejects(ALPHA) == expected
        assert bet.pairs == 400


@pytest.mark.parametrize(
    ("p_a", "p_b", "slack"),
    [(0.5, 0.5, 0.0), (0.55, 0.5, 0.015), (0.5, 0.55, 0.015)],
    ids=["fair", "boundary-a-ahead", "boundary-b-ahead"],
)
def test_false_alarms_under_continuous_monitoring_stay_below_alpha(p_a, p_b, slack):
    x, y = bernoulli_pairs(p_a, p_b, runs=1000, pairs=2000, seed=2024)
    above, below = wealth_paths(x, y, epsilon=0.05)
    ever_rejects = (above.max(axis=1) >= THRESHOLD) | (below.max(axis=1) >= THRESHOLD)
    assert ever_rejects.mean() <= ALPHA + slack


def test_power_against_a_large_gap():
    x, y = bernoulli_pairs(0.5, 0.2, runs=200, pairs=1000, seed=3)
    above, below = wealth_paths(x, y, epsilon=0.1)
    crossed = above >= THRESHOLD
    assert crossed.any(axis=1).mean() >= 0.95
    first = np.where(crossed.any(axis=1), crossed.argmax(axis=1) + 1, np.inf)
    assert np.median(first) <= 300
    assert not (below >= THRESHOLD).any()  # never the wrong side


def test_the_mirror_case_rejects_b_over_a():
    bet = GapBet(0.1)
    rng = np.random.default_rng(4)
    verdicts = set()
    for x, y in zip(rng.random(1000) < 0.2, rng.random(1000) < 0.5, strict=True):
        bet.update(float(x), float(y))
        verdicts.add(bet.rejects(ALPHA))
    assert verdicts == {None, "b>a"}


def test_bets_stay_predictable_and_bounded():
    payoffs = np.random.default_rng(5).uniform(-1.05, 0.95, size=(3, 500))
    paths = log_wealth_paths(payoffs)
    assert np.all(paths[:, 0] == 0)  # the first bet is 0: nothing is known yet
    factors = np.exp(np.diff(paths, axis=1))
    informative = np.abs(payoffs[:, 1:]) > 1e-3
    bets = (factors - 1)[informative] / payoffs[:, 1:][informative]
    assert np.all((bets > -1e-9) & (bets < 0.5 + 1e-9))


def test_pair_queue_pairs_in_arrival_order_within_each_group():
    rng = np.random.default_rng(6)
    groups = rng.random(500) < 0.7  # a runs ahead most of the time, b catches up at times
    outcomes = rng.random(500).round(3)
    queue, pairs = PairQueue(), []
    for group_is_a, outcome in zip(groups, outcomes, strict=True):
        formed = queue.push(bool(group_is_a), float(outcome))
        assert len(formed) <= 1
        pairs += formed
    a, b = outcomes[groups].tolist(), outcomes[~groups].tolist()
    assert pairs == list(zip(a, b, strict=False))  # the outcomes of the group ahead still wait


def test_pair_queue_serves_the_group_behind():
    queue = PairQueue()
    assert queue.push(False, 0.0) == [] and queue.push(False, 1.0) == []
    assert queue.push(True, 0.5) == [(0.5, 0.0)]
    assert queue.push(True, 0.25) == [(0.25, 1.0)]
    assert queue.push(True, 1.0) == []


def test_pickle_round_trip_mid_stream_continues_identically():
    x, y = bernoulli_pairs(0.6, 0.45, runs=1, pairs=600, seed=8)
    bet, queue = GapBet(0.05), PairQueue()
    for k in range(300):
        queue.push(True, x[0, k])
        for pair in queue.push(False, y[0, k]):
            bet.update(*pair)
    queue.push(True, 1.0)
    copy, queue_copy = pickle.loads(pickle.dumps(bet)), pickle.loads(pickle.dumps(queue))
    for k in range(300, 600):
        for bettor, pairing in ((bet, queue), (copy, queue_copy)):
            for pair in pairing.push(False, y[0, k]) + pairing.push(True, x[0, k]):
                bettor.update(*pair)
        assert copy.get() == bet.get()
    assert copy.pairs == bet.pairs == 600


def test_rejects_out_of_range_arguments():
    with pytest.raises(ValueError) as error:
        GapBet(1.0)
    assert str(error.value) == BAD_EPSILON.format(epsilon=1.0)
    with pytest.raises(ValueError) as error:
        GapBet(0.1).update(2, 0)
    assert str(error.value) == BAD_OUTCOME.format(x=2, y=0)
