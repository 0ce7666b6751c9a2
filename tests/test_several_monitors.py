"""Several monitors in one job read and parse the events once and give, monitor by monitor, exactly the records of
running each alone; specs that cannot share a read of the input are refused with both file names."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fairstream.compiler.load import load_plans
from fairstream.records.errors import SpecError
from fairstream.runner import FileInput, FileOutput, FileRun, Job, execute, run_file
from tests.conftest import SPECS
from tests.kafka.outputs import without_emitted_at

TOGETHER = ["compas_equalized_odds", "compas_demographic_parity_sex", "compas_disparate_impact"]
"""Equalized odds by race, demographic parity by sex and a disparate-impact ratio over the same COMPAS events."""


@pytest.fixture(scope="module")
def alone(compas_csv, tmp_path_factory) -> dict[str, FileRun]:
    return {name: run_file(name, compas_csv, tmp_path_factory.mktemp(name)) for name in TOGETHER}


def of(records: list[dict], monitor: str) -> list[dict]:
    return without_emitted_at([record for record in records if record["monitor"] == monitor])


def test_three_specs_in_one_job_give_each_monitors_records_of_running_it_alone(alone, compas_csv, tmp_path):
    job = Job(spec=TOGETHER, input=FileInput(path=str(compas_csv), format="compas"), output=FileOutput(out_dir=str(tmp_path / "together")))
    execute(job)
    together = FileRun(tmp_path / "together")
    for name, run in alone.items():
        monitor = run.read("estimates.jsonl")[0]["monitor"]
        for family in ("alerts.jsonl", "estimates.jsonl"):
            expected = without_emitted_at(run.read(family))
            assert expected and of(together.read(family), monitor) == expected, (name, family)
    assert sum(len(run.read("alerts.jsonl")) for run in alone.values()) == len(together.read("alerts.jsonl")) == 4


def test_a_folder_stands_for_its_specs(tmp_path):
    for name in TOGETHER:
        (tmp_path / f"{name}.yaml").write_text((SPECS / f"{name}.yaml").read_text())
    assert [plan.spec.monitor for plan in load_plans([str(tmp_path)])] == ["compas-demographic-parity-sex", "compas-disparate-impact", "compas-equalized-odds"]


def test_specs_that_read_the_input_differently_are_refused_with_both_files(tmp_path):
    with pytest.raises(SpecError) as refused:
        load_plans(["compas_equalized_odds", "hiring_demographic_parity"])
    assert str(refused.value) == (
        f"{SPECS / 'compas_equalized_odds.yaml'} and {SPECS / 'hiring_demographic_parity.yaml'}: input: monitors of one job read "
        "the same events, so their input sections must be equal"
    )
    twin = tmp_path / "twin.yaml"
    twin.write_text(yaml.safe_dump({**yaml.safe_load((SPECS / "compas_equalized_odds.yaml").read_text()), "monitor": "twin", "buckets": 8}))
    with pytest.raises(SpecError, match="buckets: monitors of one job read the same events"):
        load_plans(["compas_equalized_odds", str(twin)])


def test_two_specs_of_one_monitor_name_are_refused(tmp_path):
    copy = tmp_path / "copy.yaml"
    copy.write_text((SPECS / "compas_equalized_odds.yaml").read_text())
    with pytest.raises(SpecError, match="monitor: both specs name their monitor 'compas-equalized-odds'; names must differ"):
        load_plans(["compas_equalized_odds", str(copy)])


def test_the_job_reads_and_parses_once_and_has_reports_and_a_merge_per_monitor(compas_csv, tmp_path):
    """Keyed input: one read step (parse, clock and every monitor's trials happen in it), then per monitor its reports and its merge."""
    from fairstream.runner import job_flow

    job = Job(spec=TOGETHER, input=FileInput(path=str(compas_csv), format="compas"), output=FileOutput(out_dir=str(tmp_path)))
    steps = [step.step_id.rsplit(".", 1)[-1] for step in job_flow(job).substeps]
    assert steps.count("read") == 1
    names = ["compas-demographic-parity-sex", "compas-disparate-impact", "compas-equalized-odds"]
    assert sorted(step for step in steps if step.startswith("report_")) == [f"report_{name}" for name in names]
    assert sorted(step for step in steps if step.startswith("monitor_")) == [f"monitor_{name}" for name in names]


def variant(tmp_path, name: str, keyed: bool, **changes) -> str:
    """compas_equalized_odds under another name, with `changes` to its metric, estimator or publish sections."""
    spec = yaml.safe_load((SPECS / "compas_equalized_odds.yaml").read_text())
    spec["monitor"] = name
    spec["input"]["keyed"] = keyed
    for section, values in changes.items():
        spec[section] = {**spec.get(section, {}), **values}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "bucketed"])
def test_monitors_that_count_alike_share_one_merge_and_each_gives_the_records_of_running_alone(compas_csv, tmp_path, keyed):
    """Equalized odds at three thresholds, one with hysteresis, one writing estimates every 90 days, and one with anytime
    verdicts (whose tests are counted per threshold): the first four are counted once, each judged by its own verdicts."""
    from fairstream.dataflow.flow import count_groups
    from fairstream.runner import job_flow

    specs = [
        variant(tmp_path, "eo-010", keyed),
        variant(tmp_path, "eo-005", keyed, metric={"threshold": 0.05}),
        variant(tmp_path, "eo-015-hysteresis", keyed, metric={"threshold": 0.15}, estimator={"hysteresis": 0.02}),
        variant(tmp_path, "eo-005-quarterly", keyed, metric={"threshold": 0.05}, publish={"every": "90d"}),
        variant(tmp_path, "eo-anytime", keyed, estimator={"verdict": "anytime"}),
    ]
    assert count_groups(load_plans(specs)) == [[0, 1, 2, 3], [4]]
    together = Job(spec=specs, input=FileInput(path=str(compas_csv), format="compas"), output=FileOutput(out_dir=str(tmp_path / "together")))
    assert sum(step.step_id.rsplit(".", 1)[-1].startswith("monitor_") for step in job_flow(together).substeps) == 2
    execute(together)
    written = FileRun(tmp_path / "together")
    for spec in specs:
        alone = run_file(spec, compas_csv, tmp_path / f"alone-{Path(spec).stem}")
        monitor = Path(spec).stem
        for family in ("alerts.jsonl", "estimates.jsonl", "seals.jsonl"):
            expected = without_emitted_at([record for record in alone.read(family) if record.get("monitor", record.get("writer", "")).endswith(monitor)])
            assert expected and of_writer(written.read(family), monitor) == expected, (monitor, family)
    assert len(written.read("alerts.jsonl")) > 4


def of_writer(records: list[dict], monitor: str) -> list[dict]:
    return without_emitted_at([record for record in records if record.get("monitor", record.get("writer", "")).endswith(monitor)])
