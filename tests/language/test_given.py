"""`metric.given`: a hiring funnel of two stages in one spec (interviewed; offered given interviewed), each a part
named after its condition, against a pandas computation over the same stream; a given that is not boolean is refused."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from fairstream.compiler.load import check_specs
from fairstream.connectors.files import write_jsonl
from fairstream.records.errors import SpecError
from fairstream.runner import run_file


def funnel(seed: int = 5, applicants: int = 3000) -> list[dict]:
    """Each applicant applies, may be interviewed (a: 0.5, b: 0.3) and, if interviewed, may get an offer (a: 0.4, b: 0.4)."""
    rng = random.Random(seed)
    events, minute = [], 0
    for applicant in range(applicants):
        group = rng.choice("ab")
        interviewed = rng.random() < (0.5 if group == "a" else 0.3)
        offered = interviewed and rng.random() < 0.4
        minute += 1
        events.append({"event": "APPLY", "id": f"p{applicant}", "minute": minute, "group": group})
        minute += 1
        events.append({"event": "CLOSE", "id": f"p{applicant}", "minute": minute, "interviewed": interviewed, "offered": offered})
    return events


def spec(given: str = "interviewed") -> dict:
    stage = {"type": "demographic_parity", "group": "group", "threshold": 0.1}
    return {
        "monitor": "funnel",
        "input": {"time": "minute", "time_format": "epoch_s", "key": "id", "kind": "event",
                  "kinds": {"APPLY": {"group": "str"}, "CLOSE": {"interviewed": "bool", "offered": "bool"}}},
        "trial": {"opens_on": ["APPLY"], "close_on": ["CLOSE"]},
        "variables": {"group": {"first": "APPLY", "field": "group"}, "interviewed": {"first": "CLOSE", "field": "interviewed"},
                      "offered": {"first": "CLOSE", "field": "offered"}, "score": {"first": "CLOSE", "expr": "offered * 1"}},
        "metrics": [
            {"name": "interview", "metric": {**stage, "prediction": "interviewed"}},
            {"name": "offer", "metric": {**stage, "prediction": "offered", "given": given}},
        ],
        "estimator": {"prior": 0.5, "confidence": 0, "min_trials": 1},
        "evaluate": {"on": "close"},
    }  # fmt: skip


def test_each_stage_is_one_part_named_after_its_condition_with_the_conditional_rates(tmp_path):
    import yaml

    events = funnel()
    write_jsonl(tmp_path / "funnel.jsonl", events)
    (tmp_path / "funnel.yaml").write_text(yaml.safe_dump(spec()))
    run = run_file(tmp_path / "funnel.yaml", tmp_path / "funnel.jsonl", tmp_path / "out")
    last = {record["monitor"]: record for record in run.read("estimates.jsonl")}
    frame = pd.DataFrame([e for e in events if e["event"] == "APPLY"]).merge(pd.DataFrame([e for e in events if e["event"] == "CLOSE"]), on="id")
    interview = last["funnel.interview"]["parts"]
    offer = last["funnel.offer"]["parts"]
    assert list(interview) == ["selection_rate"] and list(offer) == ["selection_rate[given interviewed]"]
    for group, rows in frame.groupby("group"):
        assert interview["selection_rate"]["groups"][group]["hits"] == rows.interviewed.sum()
        assert interview["selection_rate"]["groups"][group]["trials"] == len(rows)
        asked = rows[rows.interviewed]
        cell = offer["selection_rate[given interviewed]"]["groups"][group]
        assert (cell["hits"], cell["trials"]) == (asked.offered.sum(), len(asked))
    assert offer["selection_rate[given interviewed]"]["violated"] is False  # 0.4 vs 0.4 once interviewed
    assert interview["selection_rate"]["violated"] is True  # 0.5 vs 0.3 to be interviewed


def test_a_given_that_is_not_boolean_is_refused_with_its_place():
    with pytest.raises(SpecError) as error:
        check_specs(spec(given="score"), "funnel.yaml")
    assert "metrics -> 1 -> metric -> given: must name a boolean variable; 'score' is a number" in str(error.value)
