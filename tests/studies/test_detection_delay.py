"""The anytime gap test pairs every trial of both groups (`RatioPairs`): simulated streams whose groups arrive at
random, 1:1, 1:4 and 1:9, find a gap of 0.5 vs 0.2 at ε = 0.1 within 1.4 times the decisions a fixed-sample z test
that knows the effect size needs for power 0.8 (the oracle, a closed form checked by simulation in
`test_false_alarms.py`), and raise false alarms on at most α of streams at the boundary, read after every decision."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairstream.estimators.betting import GapBet
from fairstream.estimators.pairing import RatioPairs
from fairstream.lab.studies.detection import oracle_decisions
from fairstream.lab.studies.runs import median_interval

ALPHA, EPSILON, TARGET = 0.05, 0.1, 1.4


def first_rejection(groups: np.ndarray, outcomes: np.ndarray) -> float:
    """Decisions until the test rejects (math.inf if it never does), fed in arrival order."""
    bet, pairs = GapBet(EPSILON), RatioPairs()
    for decision, (group_is_a, outcome) in enumerate(zip(groups, outcomes, strict=True), 1):
        for x, y in pairs.push(bool(group_is_a), float(outcome)):
            bet.update(x, y)
        if bet.rejects(ALPHA):
            return decision
    return math.inf


def delays(share: float, rates: tuple[float, float], runs: int, decisions: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(runs):
        groups = rng.random(decisions) < share
        outcomes = rng.random(decisions) < np.where(groups, *rates)
        found.append(first_rejection(groups, outcomes))
    return found


@pytest.mark.parametrize(
    ("share", "runs"),
    [
        (0.5, 120),
        (0.2, 120),
        pytest.param(0.5, 600, marks=pytest.mark.slow),
        pytest.param(0.2, 600, marks=pytest.mark.slow),
        pytest.param(0.1, 600, marks=pytest.mark.slow),
    ],
)
def test_median_delay_is_within_the_target_times_the_oracle(share, runs):
    oracle = oracle_decisions((0.5, 0.2), share, EPSILON, ALPHA)
    found = delays(share, (0.5, 0.2), runs, decisions=round(4 * oracle), seed=17)
    low, high = (value / oracle for value in median_interval(found))
    assert low <= TARGET, f"median delay {np.median(found) / oracle:.2f}× the oracle, 95% interval [{low:.2f}, {high:.2f}]"
    assert np.median(found) / oracle <= TARGET + 0.1
    assert sum(math.isinf(value) for value in found) <= 0.05 * runs  # the tail: runs not found within 4× the oracle


@pytest.mark.parametrize("share", [0.5, 0.2])
def test_false_alarms_at_the_boundary_stay_below_alpha_with_unequal_groups(share):
    """p_a − p_b = ε exactly: the least favourable fair stream; every decision is a look."""
    found = delays(share, (0.55, 0.45), runs=400, decisions=1500, seed=23)
    alarms = sum(not math.isinf(value) for value in found) / 400
    assert alarms <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / 400)
