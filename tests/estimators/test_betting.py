"""The betting gap test: false alarms under continuous monitoring, power, pairing, pickling; all seeded."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from fairstream.estimators import GapBet, RatioPairs, log_wealth_paths
from fairstream.estimators.betting import BAD_EPSILON, BAD_OUTCOME, LEAST_FACTOR, bet_cap
from fairstream.estimators.pairing import SLACK

ALPHA = 0.05
THRESHOLD = math.log(2 / ALPHA)  # each side at α/2


def bernoulli_pairs(p_a: float, p_b: float, runs: int, pairs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.random((runs, pairs)) < p_a).astype(float), (rng.random((runs, pairs)) < p_b).astype(float)


def wealth_paths(x: np.ndarray, y: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Log-wealth against H0⁺ and H0⁻ after every pair, for every run at once."""
    above, below = log_wealth_paths(np.stack([x - y - epsilon, y - x - epsilon]), cap=bet_cap(1 + epsilon))
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
    paths = log_wealth_paths(payoffs, cap=bet_cap(1.05))
    assert np.all(paths[:, 0] == 0)  # the first bet is 0: nothing is known yet
    factors = np.exp(np.diff(paths, axis=1))
    informative = np.abs(payoffs[:, 1:]) > 1e-3
    bets = (factors - 1)[informative] / payoffs[:, 1:][informative]
    assert np.all((bets > -1e-9) & (bets < bet_cap(1.05) + 1e-9))
    assert np.all(factors >= LEAST_FACTOR - 1e-9)  # no factor can take the wealth to zero


def test_ratio_pairs_meet_each_outcome_of_the_smaller_group_with_the_mean_of_four_at_one_to_four():
    rng = np.random.default_rng(6)
    a, b = rng.random(100).round(3), rng.random(400).round(3)
    queue, pairs = RatioPairs(), []
    for k in range(100):
        for j in range(4):
            pairs += queue.push(False, float(b[4 * k + j]))
        pairs += queue.push(True, float(a[k]))
    assert len(pairs) == 100
    assert np.allclose(np.array(pairs), np.column_stack([a, b.reshape(100, 4).mean(axis=1)]))


def test_ratio_pairs_pair_kth_with_kth_when_groups_alternate():
    queue, pairs = RatioPairs(), []
    for k in range(50):
        pairs += queue.push(k % 3 != 0, k / 100) + queue.push(k % 3 == 0, k / 100 + 0.001)
    assert len(pairs) == 50
    assert all(sorted(pair) == [k / 100, k / 100 + 0.001] for k, pair in enumerate(pairs))


@pytest.mark.parametrize("share", [0.5, 0.2, 0.1])
def test_ratio_pairs_use_every_outcome_in_arrival_order(share):
    """Walking the pairs back over each group's outcomes in arrival order accounts for all but the last few."""
    rng = np.random.default_rng(7)
    groups = rng.random(3000) < share
    outcomes = rng.random(3000)
    queue, pairs = RatioPairs(), []
    for group_is_a, outcome in zip(groups, outcomes, strict=True):
        pairs += queue.push(bool(group_is_a), float(outcome))
    sequences, used = (outcomes[groups], outcomes[~groups]), [0, 0]
    for pair in pairs:
        single = 0 if pair[0] == sequences[0][used[0]] else 1
        assert pair[single] == sequences[single][used[single]]
        used[single] += 1
        other, mean = 1 - single, pair[1 - single]
        taken = next(r for r in range(1, 40) if np.isclose(sequences[other][used[other] : used[other] + r].mean(), mean))
        used[other] += taken
    assert len(sequences[0]) - used[0] + len(sequences[1]) - used[1] <= 2 * SLACK + round(1 / min(share, 1 - share))


def certification_paths(x: np.ndarray, y: np.ndarray, epsilon: float) -> np.ndarray:
    """Per run, the smaller running maximum of the two log-wealths betting on the gap staying inside ε."""
    inside = log_wealth_paths(np.stack([epsilon - (x - y), epsilon + (x - y)]), cap=bet_cap(1 - epsilon))
    return np.maximum.accumulate(inside, axis=-1).min(axis=0)


def test_the_class_certifies_as_the_vectorized_paths_do():
    x, y = bernoulli_pairs(0.5, 0.48, runs=4, pairs=1500, seed=11)
    paths = certification_paths(x, y, 0.1)
    for run in range(4):
        bet = GapBet(0.1)
        for k in range(1500):
            bet.update(x[run, k], y[run, k])
            assert bet.certification() == pytest.approx(paths[run, k], abs=1e-12)
            assert bet.certifies(ALPHA) == (paths[run, k] >= math.log(1 / ALPHA))
    assert bet.certifies(ALPHA)


@pytest.mark.parametrize("r", [1, 4], ids=["1:1", "1:4"])
def test_false_certificates_at_a_gap_just_beyond_epsilon_stay_below_alpha(r):
    """A true gap of ε + 0.02 is never within ε: the share of runs ever certified is a false certification rate."""
    rng = np.random.default_rng(12)
    x = (rng.random((1000, 1500)) < 0.5).astype(float)
    y = (rng.random((1000, 1500, r)) < 0.38).astype(float).mean(axis=-1)
    ever = certification_paths(x, y, 0.1)[:, -1] >= math.log(1 / ALPHA)
    assert ever.mean() <= ALPHA + 0.01


def test_a_fair_pair_is_certified_and_never_rejected():
    x, y = bernoulli_pairs(0.5, 0.5, runs=200, pairs=2000, seed=13)
    assert (certification_paths(x, y, 0.1)[:, -1] >= math.log(1 / ALPHA)).mean() >= 0.95


def test_pickle_round_trip_mid_stream_continues_identically():
    x, y = bernoulli_pairs(0.6, 0.45, runs=1, pairs=600, seed=8)
    bet, queue = GapBet(0.05), RatioPairs()
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


def test_the_gap_sequence_covers_the_true_gap_at_every_look():
    """The band the bets give (each side at α/2) misses the true gap at some pair on at most α of runs."""
    x, y = bernoulli_pairs(0.5, 0.35, runs=300, pairs=1500, seed=19)
    missed = 0
    for run in range(300):
        bet = GapBet(0.1)
        for k in range(1500):
            bet.update(x[run, k], y[run, k])
            low, high = bet.bounds(ALPHA)
            if not low <= 0.15 <= high:
                missed += 1
                break
    assert missed / 300 <= ALPHA


@pytest.mark.parametrize("seed", range(6))
def test_the_violation_turns_where_the_sequence_crosses_epsilon(seed):
    x, y = bernoulli_pairs(0.55, 0.3, runs=1, pairs=800, seed=100 + seed)
    bet, verdict_at, crossed_at = GapBet(0.1), None, None
    for k in range(800):
        bet.update(x[0, k], y[0, k])
        low, high = bet.bounds(ALPHA)
        if verdict_at is None and bet.rejects(ALPHA):
            verdict_at = k
        if crossed_at is None and (low >= 0.1 or high <= -0.1):  # the rejected candidates: the gap lies beyond them
            crossed_at = k
    assert verdict_at is not None and verdict_at == crossed_at
