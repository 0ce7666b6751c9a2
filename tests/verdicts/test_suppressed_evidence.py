"""Nothing derived from a suppressed cell is published: two streams that differ only in the outcomes of a group below
publish.min_cell write the same numbers (only the verdict, reached from the real counts, may differ)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from fairstream import FairnessMonitor
from fairstream.verdicts.publish import suppress_small_cells

SPEC = {
    "monitor": "small-cell",
    "input": {"time": "time", "key": "id", "kinds": {"DECISION": {"group": "str", "approved": "bool"}}},
    "trial": {"close_on": ["DECISION"]},
    "variables": {"group": {"first": "DECISION", "field": "group"}, "approved": {"first": "DECISION", "field": "approved"}},
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "approved", "groups": "all", "threshold": 0.1},
    "estimator": {"verdict": "anytime", "alpha": 0.05, "min_trials": 1},
    "evaluate": {"every": "1h"},
    "publish": {"min_cell": 10},
}
VERDICT = ("violated", "clear", "status", "time_to_verdict")
"""What the verdict reached from the real counts decides: allowed to differ."""


def events(small_outcome: bool) -> list[dict]:
    """300 decisions of group A (approved at 0.5) and 6 of group C, all approved or all rejected."""
    rng = np.random.default_rng(5)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [("A", bool(hit)) for hit in rng.random(300) < 0.5]
    for position in (10, 60, 110, 160, 210, 260):
        rows.insert(position, ("C", small_outcome))
    return [
        {"id": str(index), "time": (start + timedelta(minutes=5 * index)).isoformat().replace("+00:00", "Z"), "group": group, "approved": hit}
        for index, (group, hit) in enumerate(rows)
    ]


def published(records: list[dict]) -> list[dict]:
    """The estimate records without what the verdict decides and without their hash chain (it covers the verdict too)."""
    kept = []
    for record in records:
        if record["type"] != "fairness.estimate":
            continue
        parts = {part: {k: v for k, v in body.items() if k not in VERDICT} for part, body in record["parts"].items()}
        kept.append({**{k: v for k, v in record.items() if k not in ("emitted_at", "chain")}, "parts": parts})
    return kept


def monitored(stream: list[dict]) -> list[dict]:
    monitor = FairnessMonitor.load(SPEC)
    return monitor.feed(stream) + monitor.close()


@pytest.fixture(scope="module")
def both():
    return [monitored(events(outcome)) for outcome in (False, True)]


def test_a_suppressed_groups_outcomes_change_no_published_number(both):
    rejected, approved = (published(records) for records in both)
    assert len(rejected) == len(approved) > 0
    assert rejected == approved
    named = [body for record in rejected for body in record["parts"].values() if body.get("pair") and "C" in body["pair"]]
    assert named and all(body["log_wealth"] is None and body["gap"] is None for body in named)


def test_the_evidence_over_every_pair_is_withheld_with_any_suppressed_cell():
    body = {
        "groups": {"A": {"trials": 50, "estimate": 0.5}, "B": {"trials": 40, "estimate": 0.4}, "C": {"trials": 3, "estimate": 1.0}},
        "pair": ["A", "B"], "gap": 0.1, "log_wealth": 1.2, "log_wealth_within": 0.7,
    }  # fmt: skip
    shown = suppress_small_cells(body, 10)
    assert shown["log_wealth"] == 1.2 and shown["gap"] == 0.1 and shown["log_wealth_within"] is None


def test_no_evidence_is_published_for_a_pair_before_its_groups_trials_mature():
    """Anytime verdicts publish matured trials (opened close_after ago) while their tests see every closed one: until
    group B has a published cell, two streams that differ only in B's first two outcomes publish the same numbers."""
    spec = {**SPEC, "trial": {"close_on": ["DECISION"], "close_after": "2d"}, "metric": {**SPEC["metric"], "groups": ["A", "B"]}}
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def stream(first_two: bool) -> list[dict]:
        rows = [("B" if index in (3, 7) else "A", first_two if index in (3, 7) else bool(index % 2)) for index in range(1200)]
        return [
            {"id": str(index), "time": (start + timedelta(minutes=5 * index)).isoformat().replace("+00:00", "Z"), "group": group, "approved": hit}
            for index, (group, hit) in enumerate(rows)
        ]

    runs = []
    for first_two in (False, True):
        monitor = FairnessMonitor.load(spec)
        records = published(monitor.feed(stream(first_two)) + monitor.close())
        runs.append([record for record in records if "B" not in record["parts"]["selection_rate"]["groups"]])
    assert len(runs[0]) == len(runs[1]) > 10
    assert runs[0] == runs[1]
    assert any(body["pair"] == ["A", "B"] and body["log_wealth"] is None for record in runs[0] for body in record["parts"].values())
