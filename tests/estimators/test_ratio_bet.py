"""Anytime tests of the four-fifths rule (`RatioBet`): simulated streams at the boundary p_b = τ·p_a keep false alarms
and false certificates at most α at every look, a ratio of 0.6 is found, and the monitor's disparate-impact verdict
is that test fed by hand in opening order."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from fairstream import FairnessMonitor
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.estimators.betting import BAD_RATIO, RatioBet
from fairstream.estimators.pairing import RatioPairs

ALPHA, TAU = 0.05, 0.8


def looks(share: float, rates: tuple[float, float], runs: int, decisions: int, seed: int) -> tuple[list[float], list[float]]:
    """Per run, the decision at which the test first rejected and first certified (math.inf for never)."""
    rng = np.random.default_rng(seed)
    rejected, certified = [], []
    for _ in range(runs):
        groups = rng.random(decisions) < share
        outcomes = rng.random(decisions) < np.where(groups, *rates)
        bet, pairs, first = RatioBet(TAU), RatioPairs(), [math.inf, math.inf]
        for decision, (group_is_a, outcome) in enumerate(zip(groups, outcomes, strict=True), 1):
            for x, y in pairs.push(bool(group_is_a), float(outcome)):
                bet.update(x, y)
            if first[0] == math.inf and bet.rejects(ALPHA):
                first[0] = decision
            if first[1] == math.inf and bet.certifies(ALPHA):
                first[1] = decision
        rejected.append(first[0])
        certified.append(first[1])
    return rejected, certified


def share_of(found: list[float]) -> float:
    return sum(not math.isinf(value) for value in found) / len(found)


@pytest.mark.parametrize("share", [0.5, 0.2])
def test_at_the_boundary_neither_false_alarms_nor_false_certificates_exceed_alpha(share):
    """p_b = 0.8 · p_a: the rule holds (no violation) and is not strictly held (no certificate may be given)."""
    rejected, certified = looks(share, (0.5, 0.4), runs=300, decisions=1500, seed=31)
    margin = 2 * math.sqrt(ALPHA * (1 - ALPHA) / 300)
    assert share_of(rejected) <= ALPHA + margin
    assert share_of(certified) <= ALPHA + margin


@pytest.mark.parametrize("share", [0.5, 0.2])
def test_a_ratio_of_0_6_is_found_and_equal_rates_are_certified(share):
    rejected, _ = looks(share, (0.5, 0.3), runs=60, decisions=3000, seed=37)
    assert share_of(rejected) >= 0.95
    _, certified = looks(share, (0.5, 0.5), runs=60, decisions=3000, seed=41)
    assert share_of(certified) >= 0.9


def test_tau_must_be_a_ratio():
    with pytest.raises(ValueError) as error:
        RatioBet(1.5)
    assert str(error.value) == BAD_RATIO.format(threshold=1.5)


def test_the_monitors_anytime_disparate_impact_is_the_ratio_test_fed_in_opening_order(tmp_path):
    events = hiring_decisions(2000, p_male=0.5, p_female=0.3, seed=3, share_male=0.7)
    spec = {
        "monitor": "four-fifths",
        "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"DECISION": {"gender": "str", "hired": "bool"}}},
        "trial": {"close_on": ["DECISION"]},
        "variables": {"group": {"first": "DECISION", "field": "gender"}, "hired": {"first": "DECISION", "field": "hired"}},
        "metric": {"type": "disparate_impact", "group": "group", "prediction": "hired", "groups": ["male", "female"], "threshold": TAU},
        "estimator": {"verdict": "anytime", "alpha": ALPHA},
        "evaluate": {"on": "close"},
    }
    (tmp_path / "four_fifths.yaml").write_text(yaml.safe_dump(spec))
    monitor = FairnessMonitor.load(tmp_path / "four_fifths.yaml")
    records = monitor.feed(events) + monitor.close()
    bet, pairs, seen = RatioBet(TAU), RatioPairs(), set()
    for event in events:  # one decision per trial: opening order is arrival order
        seen.add(event["gender"])
        if len(seen) == 2:  # the pair's test starts once both groups have an outcome
            for x, y in pairs.push(event["gender"] == "female", float(event["hired"])):
                bet.update(x, y)
    last = [record for record in records if record["type"] == "fairness.estimate"][-1]["parts"]["selection_rate"]
    assert last["log_wealth"] == pytest.approx(max(bet.get()), abs=1e-9)
    assert last["status"] == "violated" and last["pair"] == ["male", "female"]
