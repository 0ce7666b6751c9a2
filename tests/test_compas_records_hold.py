"""Every estimate record of the COMPAS runs holds what it says: no placeholder interval, an interval contains the point
it names, `violated` agrees with the alerts; and no confident violation rests on a handful of trials."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fairstream.runner import run_file

SPECS = ["compas_equalized_odds.yaml", "compas_equalized_odds_confident.yaml", "compas_equalized_odds_anytime.yaml"]


@pytest.fixture(scope="module", params=SPECS)
def run(request, specs_dir, compas_csv, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param.split(".")[0])
    result = run_file(specs_dir / request.param, compas_csv, out)
    return result.read("estimates.jsonl"), result.read("alerts.jsonl")


def intervals(body: dict[str, Any]):
    """(interval, the point it names) of a part and of each of its cells."""
    if body.get("interval") is not None:
        yield body["interval"], body[body["interval_of"]]
    for cell in body["groups"].values():
        if cell.get("interval") is not None:
            yield cell["interval"], cell[cell["interval_of"]]


def test_intervals_are_numbers_that_contain_their_point(run):
    estimates, _ = run
    checked = 0
    for record in estimates:
        for body in record["parts"].values():
            if "interval" in body and body["interval"] is None:
                assert body["interval_reason"]
            for (low, high), point in intervals(body):
                assert [low, high] != [0.0, 0.0]
                assert low - 1e-12 <= point <= high + 1e-12
                checked += 1
    assert checked > 0 or estimates[0]["verdict"] == "point"


def test_violated_agrees_with_the_alerts(run):
    estimates, alerts = run
    state: dict[str, bool] = {}
    by_time: dict[str, list[dict[str, Any]]] = {}
    for alert in alerts:
        if "part" in alert:
            by_time.setdefault(alert["event_time"], []).append(alert)
    for record in estimates:
        for alert in by_time.get(record["event_time"], []):
            state[alert["part"]] = alert["type"] == "fairness.violation"
        for part, body in record["parts"].items():
            if body["violated"] is not None or state.get(part):
                assert body["violated"] == state.get(part, False), (record["event_time"], part)


def test_a_gap_from_a_withheld_cell_is_withheld(run):
    estimates, _ = run
    for record in estimates:
        for body in record["parts"].values():
            pair = body.get("pair") or []
            if any(body["groups"][group].get("suppressed") for group in pair):
                assert body["gap"] is None and body["raw_gap"] is None and body["gap_suppressed"]


@pytest.fixture(scope="module")
def every_group(specs_dir, compas_csv, tmp_path_factory):
    """The confident COMPAS monitor over every race group (`groups: all`)."""
    folder = tmp_path_factory.mktemp("every-group")
    spec = yaml.safe_load((specs_dir / "compas_equalized_odds_confident.yaml").read_text())
    spec["metric"]["groups"] = "all"
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec))
    return run_file(folder / "spec.yaml", compas_csv, folder / "out")


def test_no_confident_violation_names_a_group_from_a_handful_of_trials(every_group):
    """With Beta-posterior intervals at κ = 100 the first FPR violation named Native American defendants from 3 trials."""
    first = {}
    for alert in every_group.read("alerts.jsonl"):
        if alert["type"] == "fairness.violation":
            cells = [alert["groups"][group] for group in alert["pair"]]
            assert all(cell["trials"] is not None and cell["trials"] >= 30 for cell in cells), alert
            first.setdefault(alert["part"], (alert["event_time"][:10], alert["pair"]))
    assert {part: pair for part, (_, pair) in first.items()} == {
        "false_positive_rate": ["African-American", "Caucasian"],
        "true_positive_rate": ["African-American", "Caucasian"],
    }
