"""The Python API gives the records of `fairstream run`: COMPAS fed in chunks, or one event at a time, through one
monitor or three, equals the file run's alerts and estimates."""

from __future__ import annotations

import pytest

from fairstream import FairnessMonitor
from fairstream.connectors.compas import compas_events
from fairstream.runner import run_file
from tests.kafka.outputs import without_emitted_at
from tests.test_several_monitors import TOGETHER


@pytest.fixture(scope="module")
def events(compas_csv):
    return compas_events(compas_csv)


@pytest.fixture(scope="module")
def file_runs(compas_csv, tmp_path_factory):
    return {name: run_file(name, compas_csv, tmp_path_factory.mktemp(name)) for name in TOGETHER}


def by_type(records, kind):
    return without_emitted_at([record for record in records if record["type"] == kind])


@pytest.mark.parametrize("chunk", [1, 997])
def test_feeding_compas_gives_the_file_runs_records(events, file_runs, chunk):
    monitor = FairnessMonitor.load("compas_equalized_odds")
    records = []
    for start in range(0, len(events), chunk):
        records += monitor.feed(events[start : start + chunk])
    records += monitor.close()
    run = file_runs["compas_equalized_odds"]
    assert by_type(records, "fairness.estimate") == without_emitted_at(run.read("estimates.jsonl"))
    assert without_emitted_at(monitor.alerts) == without_emitted_at(run.read("alerts.jsonl"))
    last = run.read("estimates.jsonl")[-1]
    assert monitor.verdicts() == {("compas-equalized-odds", part): body["violated"] for part, body in last["parts"].items()}


def test_three_monitors_fed_together_give_each_file_runs_records(events, file_runs):
    monitor = FairnessMonitor.load(*TOGETHER)
    records = monitor.feed(events) + monitor.close()
    for name, run in file_runs.items():
        name_of = run.read("estimates.jsonl")[0]["monitor"]
        mine = [record for record in records if record.get("monitor") == name_of]
        assert by_type(mine, "fairness.estimate") == without_emitted_at(run.read("estimates.jsonl")), name
        assert [r for r in without_emitted_at(mine) if r["type"] != "fairness.estimate"] == without_emitted_at(run.read("alerts.jsonl")), name


def test_bad_records_come_back_as_dead_letters(events):
    monitor = FairnessMonitor.load("compas_equalized_odds")
    letters = monitor.feed([b"{not json", {"event": ["SCREEN"], "id": "1", "date": "2014-01-01"}, *events[:10]])
    assert [(r["reason"], r["offset"]) for r in letters if r["type"] == "pipeline.dead_letter"] == [("not_json", 0), ("wrong_type", 1)]
