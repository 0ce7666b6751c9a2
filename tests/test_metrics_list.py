"""Several properties in one spec (`metrics:`): each is its own monitor `<monitor>.<name>` with its own estimator and
alerts, sharing the spec's input, trial and variables, and gives the records of a spec holding it alone; through a
file and through Kafka."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from fairstream.compiler.load import load_file_plans, load_plans
from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from fairstream.connectors.synthetic.seminar import seminar_events
from fairstream.dataflow.flow import new_partition_trials, trial_groups
from fairstream.records.errors import SpecError
from fairstream.runner import FileInput, FileOutput, Job, job_flow, run_file
from tests.conftest import SPECS
from tests.helpers import anonymous, under_any_spec
from tests.kafka.outputs import distinct, kafka_outputs
from tests.test_compas_reference import compas_trials

EQUALIZED_ODDS = yaml.safe_load((SPECS / "compas_equalized_odds.yaml").read_text())
SEX_PARITY = {"type": "demographic_parity", "group": "sex", "prediction": "high_risk", "groups": "all", "threshold": 0.05}
SEX_ESTIMATOR = {"prior": 0.5, "confidence": 0, "verdict": "confident", "alpha": 0.05}


def several() -> dict:
    spec = copy.deepcopy(EQUALIZED_ODDS)
    spec["monitor"] = "compas"
    spec["variables"]["sex"] = {"first": "SCREEN", "field": "sex"}
    metric, estimator = spec.pop("metric"), spec.pop("estimator")
    spec["metrics"] = [
        {"name": "equalized-odds", "metric": metric, "estimator": estimator},
        {"name": "parity-sex", "metric": dict(SEX_PARITY), "estimator": dict(SEX_ESTIMATOR)},
    ]
    return spec


def alone(name: str) -> dict:
    """The spec of one of the metrics on its own, under the monitor name the list gives it."""
    spec = several()
    entry = next(entry for entry in spec.pop("metrics") if entry["name"] == name)
    return {**spec, "monitor": f"compas.{name}", "metric": entry["metric"], "estimator": entry["estimator"]}


def write(tmp_path, name: str, spec: dict):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def separate(compas_csv, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("alone")
    return {name: run_file(write(tmp, name, alone(name)), compas_csv, tmp / f"out-{name}") for name in ("equalized-odds", "parity-sex")}


def test_a_spec_with_two_metrics_gives_the_records_of_each_alone(tmp_path, compas_csv, separate):
    together = run_file(write(tmp_path, "several", several()), compas_csv, tmp_path / "out")
    for name, run in separate.items():
        for family in ("alerts.jsonl", "estimates.jsonl"):
            expected = under_any_spec(run.read(family))  # each alone is a spec file of its own
            got = under_any_spec([record for record in together.read(family) if record["monitor"] == f"compas.{name}"])
            assert expected and got == expected, (name, family)


def test_each_metric_has_its_own_estimator_checked_against_pandas(compas_csv, separate):
    """The sex parity metric (κ = 0, confident verdicts) counts every screened person once, by sex, against pandas."""
    trials = compas_trials(compas_csv, lambda score: score > 6)
    sex = pd.read_csv(compas_csv, usecols=["sex"])["sex"]
    counts = trials.assign(sex=sex.values).groupby("sex").high_risk.agg(["sum", "count"])
    last = separate["parity-sex"].read("estimates.jsonl")[-1]
    assert (last["verdict"], last["confidence"]) == ("confident", 0.0)
    cells = last["parts"]["selection_rate"]["groups"]
    assert {group: (cell["hits"], cell["trials"]) for group, cell in cells.items()} == {group: (int(row["sum"]), int(row["count"])) for group, row in counts.iterrows()}
    assert separate["equalized-odds"].read("estimates.jsonl")[-1]["confidence"] == 100


def test_the_faults_of_every_metric_are_named_by_their_place_in_the_list(tmp_path):
    spec = several()
    spec["metrics"][1]["metric"]["threshold"] = 2
    spec["metrics"][0]["estimator"]["prior"] = "places / nobody"
    spec["metrics"].append({"name": "parity-sex", "metric": SEX_PARITY, "extra": 1})
    with pytest.raises(SpecError) as caught:
        load_file_plans(write(tmp_path, "bad", spec))
    assert [path for path, _ in caught.value.issues] == ["metrics -> 1 -> name", "metrics -> 2 -> extra", "metrics -> 2 -> name"]
    del spec["metrics"][2]
    with pytest.raises(SpecError) as caught:
        load_file_plans(write(tmp_path, "bad", spec))
    assert [path for path, _ in caught.value.issues] == ["metrics -> 0 -> estimator -> prior", "metrics -> 1 -> metric -> threshold"]


def test_a_job_of_a_multi_metric_spec_runs_one_monitor_per_metric(tmp_path):
    plans = load_plans([str(write(tmp_path, "several", several()))])
    assert [plan.spec.monitor for plan in plans] == ["compas.equalized-odds", "compas.parity-sex"]


def with_anytime_parity() -> dict:
    """The two metrics and a third that needs its trials one by one (anytime verdicts bet in close order)."""
    spec = several()
    spec["metrics"].append({"name": "parity-anytime", "metric": dict(SEX_PARITY), "estimator": {"prior": 0.5, "confidence": 10, "verdict": "anytime", "alpha": 0.05}})
    return spec


def test_the_metrics_of_one_spec_fold_each_trial_once(tmp_path, compas_csv):
    """One trial bucket per partition (keyed input) or one trials step (re-keyed input) serves every metric of the spec."""
    plans = load_plans([str(write(tmp_path, "three", with_anytime_parity()))])
    assert trial_groups(plans) == [[0, 1, 2]]
    partition = new_partition_trials(plans, 0, 1, strings=True)
    assert len(partition.buckets) == 1 and [recipient.keep_trials for recipient in partition.buckets[0].recipients] == [False, False, True]
    rekeyed = with_anytime_parity()
    rekeyed["input"]["keyed"] = False
    job = Job(spec=str(write(tmp_path, "rekeyed", rekeyed)), input=FileInput(path=str(compas_csv), format="compas"), output=FileOutput(out_dir=str(tmp_path)))
    steps = [step.step_id.rsplit(".", 1)[-1] for step in job_flow(job).substeps]
    assert [step for step in steps if step.startswith("trials")] == ["trials_compas_equalized-odds"]
    assert sorted(step for step in steps if step.startswith("monitor_")) == ["monitor_compas_equalized-odds", "monitor_compas_parity-anytime", "monitor_compas_parity-sex"]


def test_a_metric_that_takes_trials_one_by_one_shares_them_with_metrics_that_count_them(tmp_path, compas_csv, separate):
    """Sharing trials with a metric that needs them one by one changes nothing for the others, nor for it."""
    together = run_file(write(tmp_path, "three", with_anytime_parity()), compas_csv, tmp_path / "out")
    spec = with_anytime_parity()
    entry = spec.pop("metrics")[-1]
    anytime = run_file(write(tmp_path, "anytime", {**spec, "monitor": "compas.parity-anytime", "metric": entry["metric"], "estimator": entry["estimator"]}), compas_csv, tmp_path / "alone")
    for name, run in (*separate.items(), ("parity-anytime", anytime)):
        expected = under_any_spec(run.read("estimates.jsonl"))
        got = under_any_spec([record for record in together.read("estimates.jsonl") if record["monitor"] == f"compas.{name}"])
        assert expected and got == expected, name


@pytest.mark.kafka
def test_a_multi_metric_spec_through_kafka_equals_the_file_path(kafka_bootstrap, topic, compas_csv, tmp_path, separate):
    replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=2)
    alerts = f"{topic}-alerts"
    path = write(tmp_path, "several", several())
    run = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", str(path), "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts, "--until-end"],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    got = kafka_outputs(kafka_bootstrap, alerts)
    for name, alone_run in separate.items():
        for family in ("alerts", "estimates"):
            mine = [record for record in distinct(got[family]).values() if record["monitor"] == f"compas.{name}"]
            assert under_any_spec(mine) == under_any_spec(alone_run.read(f"{family}.jsonl")), (name, family)


def test_the_shipped_seminar_spec_gives_the_records_of_the_two_seminar_specs(tmp_path):
    """`specs/seminar_parity.yaml` holds both seminar properties; each monitor's records equal those of the separate
    spec, but for the monitor name (and the alert ids that hash it)."""
    events = seminar_events("Qualification", seed=5, applicants=300, qualification_gap=2)
    path = tmp_path / "seminar.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    together = run_file(SPECS / "seminar_parity.yaml", path, tmp_path / "together")
    for name, separate in (("overall", "seminar_demographic_parity"), ("per-seminar", "seminar_conditional_statistical_parity")):
        alone_run = run_file(SPECS / f"{separate}.yaml", path, tmp_path / separate)
        for family in ("alerts.jsonl", "estimates.jsonl"):
            expected = [anonymous(record) for record in alone_run.read(family)]
            got = [anonymous(record) for record in together.read(family) if record["monitor"] == f"seminar-parity.{name}"]
            assert got == expected, (name, family)
        assert alone_run.read("estimates.jsonl") and alone_run.read("alerts.jsonl"), name
