"""Several input topics: screenings on one topic and their outcomes on another, co-partitioned by the defendant, give
the alerts and estimates of one file holding every event; topics that are not co-partitioned are refused at start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import ensure_topics
from fairstream.connectors.replay import replay
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute, run_file
from tests.conftest import SPECS
from tests.helpers import under_any_spec
from tests.kafka.outputs import comparable, file_outputs, kafka_outputs

pytestmark = pytest.mark.kafka
SPEC = str(SPECS / "compas_equalized_odds.yaml")


@pytest.fixture(scope="module")
def one_file(compas_csv, tmp_path_factory):
    return comparable(file_outputs(run_file(SPEC, compas_csv, tmp_path_factory.mktemp("file"))))


@pytest.mark.parametrize(("partitions", "processes"), [(1, 1), (2, 1), (2, 2)])
def test_screenings_and_outcomes_on_two_topics_give_the_one_file_results(kafka_bootstrap, topic, compas_csv, one_file, partitions, processes):
    events = list(compas_events(compas_csv))
    screenings, outcomes = f"{topic}-screenings", f"{topic}-outcomes"
    replay([event for event in events if event["event"] == "SCREEN"], kafka_bootstrap, screenings, partitions=partitions)
    replay([event for event in events if event["event"] != "SCREEN"], kafka_bootstrap, outcomes, partitions=partitions)
    alerts = f"{topic}-alerts"
    job = Job(spec=SPEC, input=KafkaInput(bootstrap=kafka_bootstrap, topics=[screenings, outcomes], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts))
    execute(job, processes=processes)
    merged = comparable(kafka_outputs(kafka_bootstrap, alerts))
    assert merged["alerts"] == one_file["alerts"] and len(merged["alerts"]) >= 2
    assert merged["estimates"] == one_file["estimates"]
    assert not merged["dead_letters"] and not one_file["dead_letters"]


def test_topics_of_different_partition_counts_are_refused_in_one_line_naming_both(kafka_bootstrap, topic):
    ensure_topics(kafka_bootstrap, {f"{topic}-a": 1, f"{topic}-b": 2})
    run = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap,
         "--topic", f"{topic}-a", "--topic", f"{topic}-b", "--until-end"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert run.stderr.count("\n") == 1
    assert f"'{topic}-a' (1 partitions) and '{topic}-b' (2) are not co-partitioned" in run.stderr
    assert "fairstream replay" in run.stderr


def test_the_specs_topics_are_read_unless_topic_overrides_them(kafka_bootstrap, topic, compas_csv, one_file, tmp_path):
    events = list(compas_events(compas_csv))
    screenings, outcomes = f"{topic}-screenings", f"{topic}-outcomes"
    replay([event for event in events if event["event"] == "SCREEN"], kafka_bootstrap, screenings)
    replay([event for event in events if event["event"] != "SCREEN"], kafka_bootstrap, outcomes)
    spec = yaml.safe_load(Path(SPEC).read_text())
    spec["input"]["topics"] = [screenings, outcomes]
    (tmp_path / "listed.yaml").write_text(yaml.safe_dump(spec))
    spec["input"]["topics"] = [f"{topic}-misspelt"]
    (tmp_path / "overridden.yaml").write_text(yaml.safe_dump(spec))
    for name, topics in (("listed", []), ("overridden", ["--topic", screenings, "--topic", outcomes])):
        alerts = f"{topic}-{name}-alerts"
        run = subprocess.run(
            [sys.executable, "-m", "fairstream.cli", "run", str(tmp_path / f"{name}.yaml"), "--bootstrap", kafka_bootstrap, *topics, "--alerts", alerts, "--until-end"],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert f"read '{screenings}', '{outcomes}' to their end" in run.stdout
        assert under_any_spec(comparable(kafka_outputs(kafka_bootstrap, alerts))["alerts"]) == under_any_spec(one_file["alerts"])  # a spec file of its own
