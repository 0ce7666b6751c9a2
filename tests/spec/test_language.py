"""Spec language constructs against independent pandas computations, through `fairstream run` on a file: a composite
dependence key, booleans counted as numbers and conditional values, and a prior and κ per conditional rate."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.errors import SpecError
from fairstream.spec.load import parse_spec
from fairstream.spec.plan import build_plan

BRANCHES = ("north", "south")


def credit_stream(seed: int = 3, applicants: int = 400) -> list[dict]:
    """Applications per applicant *and* branch: an applicant applies at one or both branches, then each branch decides."""
    rng = random.Random(seed)
    events = []
    minute = 0
    for applicant in range(applicants):
        group = rng.choice(["a", "b"])
        branches = BRANCHES if rng.random() < 0.65 else BRANCHES[:1]
        scores = {branch: rng.randint(0, 10) for branch in branches}
        for branch in branches:
            minute += 1
            events.append({"event": "APPLY", "applicant_id": f"A{applicant}", "branch": branch, "minute": minute, "group": group, "score": scores[branch]})
        for branch in branches:
            minute += 1
            approved = rng.random() < (0.7 if group == "a" else 0.45) * (0.6 + scores[branch] / 25)
            events.append({"event": "DECISION", "applicant_id": f"A{applicant}", "branch": branch, "minute": minute, "approved": approved})
    return events


SPEC = {
    "monitor": "credit-branches",
    "input": {
        "time": "minute",
        "time_format": "epoch_s",
        "key": ["applicant_id", "branch"],
        "kind": "event",
        "kinds": {"APPLY": {"group": "str", "score": "int"}, "DECISION": {"approved": "bool"}},
    },
    "trial": {"opens_on": ["APPLY"], "close_on": ["DECISION"]},
    "variables": {
        "group": {"first": "APPLY", "field": "group"},
        "approved": {"first": "DECISION", "field": "approved"},
        "score": {"first": "APPLY", "field": "score"},
    },
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "approved", "threshold": 0.1},
    "estimator": {"prior": 0.5, "confidence": 0},
    "evaluate": {"on": "close"},
}


def trials_of(events: list[dict]) -> pd.DataFrame:
    """One row per (applicant, branch): its application's group and score, and its decision."""
    frame = pd.DataFrame(events)
    applications = frame[frame.event == "APPLY"][["applicant_id", "branch", "group", "score"]]
    return frame[frame.event == "DECISION"][["applicant_id", "branch", "approved"]].merge(applications, on=["applicant_id", "branch"])


def run_spec(tmp_path: Path, spec: dict, events: list[dict]) -> list[dict]:
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events))
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "spec.yaml"), "--input", str(tmp_path / "events.jsonl"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return [json.loads(line) for line in (tmp_path / "out" / "estimates.jsonl").read_text().splitlines()]


def test_a_composite_key_makes_one_trial_per_applicant_and_branch(tmp_path):
    events = credit_stream()
    decisions = trials_of(events)
    expected = decisions.groupby("group").approved.agg(["sum", "count"])
    assert decisions.applicant_id.duplicated().any()  # some applicants have a trial at both branches
    last = run_spec(tmp_path, SPEC, events)[-1]
    cells = last["parts"]["selection_rate"]["groups"]
    for group in ("a", "b"):
        assert (cells[group]["hits"], cells[group]["trials"]) == (expected.loc[group, "sum"], expected.loc[group, "count"])
    assert last["trials"]["closed"] == len(decisions)


def test_one_field_of_the_two_keys_each_applicant_once(tmp_path):
    """The same stream keyed by applicant alone: both branches of an applicant fold into one trial, closed by the first
    decision; the second branch's decision finds no open trial."""
    spec = {**SPEC, "input": {**SPEC["input"], "key": "applicant_id"}}
    last = run_spec(tmp_path, spec, credit_stream())[-1]
    assert last["trials"]["closed"] == len({event["applicant_id"] for event in credit_stream()})


def test_a_record_missing_a_key_part_is_a_dead_letter_naming_the_key(tmp_path):
    events = credit_stream(applicants=5)
    del events[0]["branch"]
    run_spec(tmp_path, SPEC, events)
    letters = [json.loads(line) for line in (tmp_path / "out" / "dead_letters.jsonl").read_text().splitlines()]
    assert [letter["reason"] for letter in letters] == ["missing_field"]
    assert letters[0]["detail"] == "dependence key [applicant_id, branch]: a part is missing, empty, or not a string or an integer"


def test_booleans_count_as_numbers_and_conditionals_choose_in_variables(tmp_path):
    """A delayed-impact mean of `approved * 10 + (5 if score >= 5 else 0)` per group, against pandas."""
    spec = {
        **SPEC,
        "variables": {
            **SPEC["variables"],
            "points": {"first": "DECISION", "expr": "approved * 10"},
            "bonus": {"first": "APPLY", "expr": "5 if score >= 5 else 0"},
            "value": {"expr": "points + bonus"},
        },
        "metric": {"type": "delayed_impact", "group": "group", "outcome": "value", "threshold": 1},
    }
    events = credit_stream()
    trials = trials_of(events)
    trials["value"] = trials.approved.astype(int) * 10 + (trials.score >= 5) * 5
    expected = trials.groupby("group").value.mean()
    cells = run_spec(tmp_path, spec, events)[-1]["parts"]["mean_outcome"]["groups"]
    for group in ("a", "b"):
        assert cells[group]["estimate"] == pytest.approx(expected[group], rel=1e-12)


def test_each_conditional_rate_takes_its_own_prior_and_kappa(tmp_path):
    """Equalized odds with κ = 100 and γ = 0.2 for the true-positive rate only: (hits + γκ)/(trials + κ) per group there,
    the plain ratio for the false-positive rate, against pandas."""
    spec = {
        **SPEC,
        "variables": {**SPEC["variables"], "good": {"first": "APPLY", "expr": "score >= 5"}},
        "metric": {"type": "equalized_odds", "group": "group", "prediction": "approved", "label": "good", "threshold": 0.1},
        "estimator": {"prior": 0.5, "confidence": 0, "parts": {"true_positive_rate": {"prior": 0.2, "confidence": 100}}},
    }
    events = credit_stream()
    trials = trials_of(events)
    parts = run_spec(tmp_path, spec, events)[-1]["parts"]
    for part, label, prior, kappa in (("true_positive_rate", True, 0.2, 100), ("false_positive_rate", False, 0.5, 0)):
        subset = trials[(trials.score >= 5) == label]
        counts = subset.groupby("group").approved.agg(["sum", "count"])
        assert (parts[part]["prior"], parts[part]["confidence"]) == (prior, kappa)
        for group in ("a", "b"):
            expected = (counts.loc[group, "sum"] + prior * kappa) / (counts.loc[group, "count"] + kappa)
            assert parts[part]["groups"][group]["estimate"] == pytest.approx(expected, rel=1e-12), (part, group)


def test_an_unknown_part_is_named_with_the_metrics_parts():
    spec = {**SPEC, "estimator": {"prior": 0.5, "parts": {"true_positive_rate": {"confidence": 5}}}}
    with pytest.raises(SpecError, match=r"estimator -> parts -> true_positive_rate: demographic_parity has no part 'true_positive_rate'; its parts: selection_rate"):
        build_plan(parse_spec(spec))


def test_a_composite_key_names_distinct_fields():
    spec = {**SPEC, "input": {**SPEC["input"], "key": ["applicant_id", "applicant_id"]}}
    with pytest.raises(SpecError, match=r"a composite key names one or more distinct fields"):
        parse_spec(spec)


def delayed_decisions(seed: int = 8, applicants: int = 900) -> list[dict]:
    """Applications over 200 days, each decided 0–120 days later: late labels, as in a credit pipeline."""
    rng = random.Random(seed)
    events = []
    for index in range(applicants):
        opened = rng.randrange(0, 200 * 86400)
        group = rng.choice(["a", "b"])
        approved = rng.random() < (0.6 if group == "a" else 0.4 + 0.3 * opened / (200 * 86400))  # b drifts upwards
        events.append({"event": "APPLY", "applicant_id": f"A{index}", "branch": "north", "minute": opened, "group": group, "score": 5})
        events.append({"event": "DECISION", "applicant_id": f"A{index}", "branch": "north", "minute": opened + rng.randrange(0, 120 * 86400), "approved": approved})
    return sorted(events, key=lambda event: event["minute"])


@pytest.mark.parametrize("kind", ["sliding", "periodic"])
def test_windows_by_opened_time_count_the_decisions_of_their_span(tmp_path, kind):
    """Against pandas: at each daily evaluation, the trials opened within the window's span and closed by then."""
    spec = {**SPEC, "trial": {"opens_on": ["APPLY"], "close_on": ["DECISION"], "close_after": "200d"}, "evaluate": {"every": "1d"},
            "window": {"kind": kind, "length": "30d", "by": "opened"}, "publish": {"min_cell": 1}}  # fmt: skip
    events = delayed_decisions()
    frame = pd.DataFrame(events)
    trials = frame[frame.event == "APPLY"][["applicant_id", "minute", "group"]].rename(columns={"minute": "opened"}).merge(
        frame[frame.event == "DECISION"][["applicant_id", "minute", "approved"]].rename(columns={"minute": "closed"}), on="applicant_id"
    )
    estimates = run_spec(tmp_path, spec, events)
    length, checked = 30 * 86400, 0
    for record in estimates[::7]:
        tick = int(pd.Timestamp(record["event_time"]).timestamp())
        start = tick - length if kind == "sliding" else (tick - tick % length if tick % length else tick - length)
        covered = trials[(trials.opened > start) & (trials.opened <= tick) & (trials.closed <= tick)]
        counts = covered.groupby("group").approved.agg(["sum", "count"])
        expected = {group: [int(row["sum"]), int(row["count"])] for group, row in counts.iterrows()}
        got = {g: [c["hits"], c["trials"]] for g, c in record["parts"].get("selection_rate", {"groups": {}})["groups"].items()}
        assert got == expected, record["event_time"]
        checked += bool(expected)
    assert checked > 10
