"""The page on one alarm across many pairs runs as written: its spec's metric is the one the run uses, its example
record is what that run writes, and its measured tables are what `fairstream bench alarms` prints."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.docs.markdown import ROOT, bench, blocks, table_rows
from tests.test_merged_alarm import SPEC, job_specs, run, write

PAGE = (ROOT / "docs" / "many-pairs.md").read_text()


def test_the_example_record_is_what_the_run_writes(tmp_path):
    shown_spec, used = yaml.safe_load(blocks(PAGE, "yaml")[0]), yaml.safe_load(SPEC)
    assert shown_spec == {key: used[key] for key in ("metric", "estimator", "evaluate")}
    (merged,) = [alert for alert in run(tmp_path, write(tmp_path / "many.jsonl", "many", 5, 12_000)) if alert["type"] == "fairness.violated_somewhere"]
    shown = json.loads(blocks(PAGE, "json")[0])
    assert {key: merged[key] for key in ("type", "event_time", "alpha", "pairs_tested")} == {key: shown[key] for key in ("type", "event_time", "alpha", "pairs_tested")}
    (pooled,) = merged["pooled"]
    (example,) = shown["pooled"]
    assert (pooled["part"], pooled["rounds"]) == (example["part"], example["rounds"])
    assert [stake["pair"] for stake in pooled["leaning_on"][: len(example["leaning_on"])]] == [stake["pair"] for stake in example["leaning_on"]]


def test_the_benchmark_prints_the_pages_measures(tmp_path):
    printed = bench("alarms", "--runs", "2", "--still-decisions", "300", "--one-decisions", "300", "--many-decisions", "300", "--figure", str(tmp_path / "alarms.png"), cwd=tmp_path)
    assert [row.split(" | ")[0] for row in table_rows(printed)] == ["| any per-pair test", "| merged alarm", "| one pair ε + 0.05 apart (1 of 66 pairs)", "| half the groups ε + 0.05 apart (36 of 66 pairs)"]
    assert (tmp_path / "alarms.png").stat().st_size > 10_000


@pytest.mark.slow
def test_the_measured_tables_are_what_the_benchmark_prints(tmp_path):
    for row in table_rows(bench("alarms", cwd=tmp_path)):
        assert row in PAGE, row


def test_the_job_example_is_what_a_job_of_two_monitors_writes(tmp_path):
    from click.testing import CliRunner

    from fairstream.cli import cli

    specs = job_specs(tmp_path / "specs")
    data = write(tmp_path / "many.jsonl", "many", 5, 12_000)
    result = CliRunner().invoke(cli, ["run", str(specs), "--input", str(data), "--out", str(tmp_path / "out")], env={"NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    (job,) = [json.loads(line) for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines() if '"fairness.job_violated_somewhere"' in line]
    shown = json.loads(blocks(PAGE, "json")[1])
    assert {key: job[key] for key in ("type", "monitor", "job", "alpha")} == {key: shown[key] for key in ("type", "monitor", "job", "alpha")}
    assert [(entry["monitor"], round(entry["share_of_evidence"], 2)) for entry in job["monitors"]] == [(entry["monitor"], entry["share_of_evidence"]) for entry in shown["monitors"]]
