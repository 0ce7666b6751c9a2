"""One alarm across many pairs, through the whole run: twelve groups whose two halves drift ε + 0.05 apart raise one
`fairness.violated_somewhere` record long before any pair's own test, naming pairs across the halves, the same with
two workers; groups at the threshold raise none; and the merged evidence crosses where its formula says."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path

import jsonschema
import numpy as np
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.lab.alarms.many_pairs import GROUPS, rates
from fairstream.verdicts.budget import MonitorBudget
from fairstream.verdicts.many_pairs.merged import MergedEvidence

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
START = datetime(2026, 1, 1, tzinfo=UTC)
SPEC = f"""\
monitor: hiring-many
input: {{time: time, key: id, kind: event, kinds: {{DECISION: {{group: str, hired: bool}}}}}}
trial: {{close_on: [DECISION]}}
variables:
  group: {{first: DECISION, field: group}}
  hired: {{first: DECISION, field: hired}}
metric: {{type: demographic_parity, group: group, prediction: hired, groups: [{", ".join(GROUPS)}], threshold: 0.1}}
estimator: {{verdict: anytime, alpha: 0.05}}
evaluate: {{every: 1h}}
"""


def write(path: Path, scenario: str, seed: int, n: int) -> Path:
    """A decision a minute from START, each of a group drawn evenly, hired with the scenario's rate of its group."""
    rng = np.random.default_rng(seed)
    rate = rates(scenario)
    chosen, draws = rng.integers(0, len(GROUPS), n), rng.random(n)
    with path.open("w") as out:
        for index in range(n):
            group = GROUPS[chosen[index]]
            time = (START + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.write(json.dumps({"time": time, "id": f"D{index}", "event": "DECISION", "group": group, "hired": bool(draws[index] < rate[group])}) + "\n")
    return path


def job_specs(folder: Path) -> Path:
    """Two monitors of the twelve groups, thresholds 0.1 and 0.12: a job whose monitors both merge their pairs."""
    folder.mkdir()
    (folder / "a.yaml").write_text(SPEC.replace("monitor: hiring-many", "monitor: hiring-a"))
    (folder / "b.yaml").write_text(SPEC.replace("monitor: hiring-many", "monitor: hiring-b").replace("threshold: 0.1}", "threshold: 0.12}"))
    return folder


def run(tmp_path: Path, data: Path, *options: str, name: str = "out") -> list[dict]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(data), "--out", str(tmp_path / name), *options], env=ENV)
    assert result.exit_code == 0, result.output
    path = tmp_path / name / "alerts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_many_pairs_drifting_raise_one_merged_alarm_before_any_pair_and_name_pairs_across_the_halves(tmp_path):
    data = write(tmp_path / "many.jsonl", "many", 5, 12_000)
    alerts = run(tmp_path, data)
    kinds = [alert["type"] for alert in alerts if alert["type"] != "fairness.estimate"]
    assert kinds[0] == "fairness.violated_somewhere" and kinds.count("fairness.violated_somewhere") == 1, kinds
    (merged,) = [alert for alert in alerts if alert["type"] == "fairness.violated_somewhere"]
    assert merged["pairs_tested"] == 66 and merged["log_evidence"] >= math.log(1 / 0.05)
    jsonschema.validate(merged, json.loads((files("fairstream.records") / "schemas" / "merged.schema.json").read_text()))
    rate = rates("many")
    named = [carrier["pair"] for carrier in merged["carriers"]] + [stake["pair"] for pooled in merged["pooled"] for stake in pooled["leaning_on"]]
    assert named and all(abs(rate[a] - rate[b]) > 0.1 for a, b in named), named
    assert (datetime.fromisoformat(merged["event_time"]) - START).total_seconds() / 60 < 8000

    def comparable(records: list[dict]) -> list[dict]:
        return [{k: v for k, v in record.items() if k not in ("emitted_at", "chain")} for record in records if record["type"] != "fairness.estimate"]

    assert comparable(run(tmp_path, data, "--workers", "2", name="two")) == comparable(alerts)


def test_groups_at_the_threshold_raise_no_merged_alarm(tmp_path):
    assert [alert for alert in run(tmp_path, write(tmp_path / "still.jsonl", "still", 6, 8000)) if alert["type"] != "fairness.estimate"] == []


def test_one_pair_alone_raises_the_merged_alarm_at_four_over_its_share_of_alpha():
    """Three declared pairs, two idle at wealth 1: M = ½·Σ w(K⁺ + K⁻)/2 with w = 1/3, so the alarm at M = 1/α needs
    (1/3)(K + 1)/4 + 2·(1/3)(1 + 1)/4 = 20, K = 235 (the pooled half idle at wealth 1 adds 1/2: K = 229)."""
    alpha, idle = 0.05, (0.0, 0.0)
    for pooled, needed in ((False, 235.0), (True, 229.0)):
        merged = MergedEvidence(alpha, MonitorBudget(1.0, "monitor", 1, 3))
        for pair in (("p", "a", "c"), ("p", "b", "c")):
            merged.update(pair, idle)
        if pooled:
            merged.pooled_terms["p"] = 0.5
            merged.total += 0.5
        merged.update(("p", "a", "b"), (math.log(needed * 0.999), 0.0))
        assert not merged.raised
        merged.update(("p", "a", "b"), (math.log(needed * 1.001), 0.0))
        assert merged.raised



def test_a_job_of_two_monitors_raises_one_job_alarm_the_same_with_two_workers_and_its_chain_verifies(tmp_path):
    specs = job_specs(tmp_path / "specs")
    data = write(tmp_path / "many.jsonl", "many", 5, 12_000)

    def alarms(*options: str, name: str) -> list[dict]:
        out = tmp_path / name
        result = CliRunner().invoke(cli, ["run", str(specs), "--input", str(data), "--out", str(out), *options], env=ENV)
        assert result.exit_code == 0, result.output
        assert "violated somewhere in the job" in " ".join(result.output.split())
        verified = CliRunner().invoke(cli, ["verify", str(out)], env=ENV)
        assert verified.exit_code == 0 and "job/hiring-a" in verified.output, verified.output
        records = [json.loads(line) for line in (out / "alerts.jsonl").read_text().splitlines()]
        schema = json.loads((files("fairstream.records") / "schemas" / "job-merged.schema.json").read_text())
        for record in records:
            if record["type"] == "fairness.job_violated_somewhere":
                jsonschema.validate(record, schema)
        return sorted(({k: v for k, v in record.items() if k not in ("emitted_at", "chain")} for record in records), key=lambda record: record["alert_id"])

    one = alarms(name="one")
    (job,) = [record for record in one if record["type"] == "fairness.job_violated_somewhere"]
    (own,) = [record for record in one if record["type"] == "fairness.violated_somewhere"]
    assert job["job"] == "job/hiring-a" and {entry["monitor"] for entry in job["monitors"]} == {"hiring-a", "hiring-b"}
    average = sum(math.exp(entry["log_evidence"]) for entry in job["monitors"]) / 2
    assert math.isclose(math.log(average), job["log_evidence"]) and average >= 1 / 0.05
    assert own["monitor"] == "hiring-a"
    assert alarms("--workers", "2", name="two") == one
