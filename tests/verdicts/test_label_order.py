"""Published anytime estimates do not lean on which labels came first: on fair streams whose group A approvals are
labelled after a mean of 30 h (everything else after 2 h), the rates, gaps and time to verdict count the trials opened
at least the label horizon (close_after) ago, computed here from the generated stream; and every interval contains the
value it names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from statistics import mean

import numpy as np
import pytest

from fairstream.compiler.load import parse_spec
from fairstream.compiler.plan import build_plan
from fairstream.lab.studies.runs import monitor_records

START = datetime(2026, 1, 1, tzinfo=UTC)
SPEC = {
    "monitor": "loans",
    "input": {"time": "time", "key": "id", "kind": "kind", "kinds": {"APPLY": {"group": "str"}, "DECISION": {"approved": "bool"}}},
    "trial": {"opens_on": ["APPLY"], "close_on": ["DECISION"], "close_after": "3d"},
    "variables": {"group": {"first": "APPLY", "field": "group"}, "approved": {"first": "DECISION", "field": "approved"}},
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "approved", "groups": ["A", "B"], "threshold": 0.1},
    "estimator": {"verdict": "anytime", "alpha": 0.05},
    "evaluate": {"every": "1h"},
    "publish": {"min_cell": 1},
}
LOOKS = (96, 120)
"""The hours after the start at which the published numbers are read."""


def stream(seed: int, n: int = 2400) -> tuple[list[dict], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A fair stream: one application every 3 minutes, approved with probability 0.5 in both groups, decided after a
    uniform delay of mean 30 h (up to 60 h) for group A's approvals and of mean 2 h for everything else."""
    rng = np.random.default_rng(seed)
    in_a, approved = rng.random(n) < 0.5, rng.random(n) < 0.5
    opened = np.arange(n) * 180.0  # seconds
    decided = opened + rng.uniform(0, np.where(in_a & approved, 60 * 3600, 4 * 3600))
    events = []
    for index in range(n):
        events.append((opened[index], {"id": str(index), "kind": "APPLY", "group": "A" if in_a[index] else "B"}))
        events.append((decided[index], {"id": str(index), "kind": "DECISION", "approved": bool(approved[index])}))
    events.sort(key=lambda pair: pair[0])
    stamped = [{**event, "time": (START + timedelta(seconds=float(at))).isoformat().replace("+00:00", "Z")} for at, event in events]
    return stamped, in_a, approved, opened, decided


def matured(at_hour: int, in_a, approved, opened, decided) -> dict[str, tuple[int, int]]:
    """(hits, trials) per group among the trials opened at least 72 h (the close_after) before the look."""
    taken = opened <= (at_hour - 72) * 3600.0
    assert (decided[taken] <= at_hour * 3600.0).all()
    return {group: (int((approved & taken & side).sum()), int((taken & side).sum())) for group, side in (("A", in_a), ("B", ~in_a))}


def closed(at_hour: int, in_a, approved, opened, decided) -> float:
    """The gap A − B of the rates over every trial decided by the look: what label order does to a plain count."""
    done = decided <= at_hour * 3600.0
    return (approved & done & in_a).sum() / (done & in_a).sum() - (approved & done & ~in_a).sum() / (done & ~in_a).sum()


@pytest.fixture(scope="module")
def runs():
    plan = build_plan(parse_spec(SPEC))
    return [(stream(seed), monitor_records(plan, stream(seed)[0])) for seed in range(30)]


def at(records: list[dict], hour: int) -> dict:
    stamp = (START + timedelta(hours=hour)).isoformat().replace("+00:00", "Z")
    return next(r for r in records if r["type"] == "fairness.estimate" and r["event_time"] == stamp)


def test_published_counts_are_the_matured_trials(runs):
    for (_events, *truth), records in runs[:5]:
        for hour in LOOKS:
            body = at(records, hour)["parts"]["selection_rate"]
            assert body["counted"] == "matured" and body["opened_by"] == (START + timedelta(hours=hour - 72)).isoformat().replace("+00:00", "Z")
            assert {group: (cell["hits"], cell["trials"]) for group, cell in body["groups"].items()} == matured(hour, *truth)


def test_published_gaps_and_time_to_verdict_do_not_lean_on_label_order(runs):
    for hour in LOOKS:
        gaps, toward, plain = [], [], []
        for (_events, *truth), records in runs:
            plain.append(closed(hour, *truth))
            groups = at(records, hour)["parts"]["selection_rate"]["groups"]
            gaps.append(groups["A"]["rate"] - groups["B"]["rate"])
            body = at(records, hour)["parts"]["selection_rate"]
            if body.get("time_to_verdict"):
                toward.append(body["time_to_verdict"]["toward"])
        assert mean(plain) < -0.05, (hour, mean(plain))  # counting every trial decided by then leans on label order
        assert abs(mean(gaps)) < 0.03, (hour, mean(gaps))
        assert toward.count("violated") <= len(runs) // 5, (hour, toward)


def test_every_interval_contains_the_value_it_names(runs):
    checked = 0
    for _stream, records in runs:
        for record in records:
            if record["type"] != "fairness.estimate":
                continue
            for body in record["parts"].values():
                for holder in (body, *body["groups"].values()):
                    if holder.get("interval") is not None:
                        low, high = holder["interval"]
                        assert low - 1e-12 <= holder[holder["interval_of"]] <= high + 1e-12
                        checked += 1
    assert checked > 1000
