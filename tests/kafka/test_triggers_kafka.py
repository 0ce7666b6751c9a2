"""Windows over raw events and triggers on the Kafka path on a real broker: the records of the file path (window
values, open trials, trigger records and their ids), on two partitions read by one process and by two."""

from __future__ import annotations

import pytest
import yaml

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import estimates_topic
from fairstream.connectors.replay import replay
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute, run_file
from tests.conftest import SPECS, needs_bytewax
from tests.kafka.test_kafka_path import without_wall_clock
from tests.test_event_windows import windowed_spec

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def spec_and_file_records(compas_csv, tmp_path_factory):
    folder = tmp_path_factory.mktemp("triggers")
    spec = windowed_spec(yaml.safe_load((SPECS / "compas_equalized_odds.yaml").read_text()), folder / "spec.yaml")
    result = run_file(spec, compas_csv, folder / "out")
    return spec, without_wall_clock(result.read("alerts.jsonl")), without_wall_clock(result.read("estimates.jsonl"))


@pytest.mark.parametrize("processes", [1, pytest.param(2, marks=needs_bytewax)])
def test_triggers_through_kafka_equal_the_file_path(kafka_bootstrap, topic, compas_csv, spec_and_file_records, processes):
    spec, file_alerts, file_estimates = spec_and_file_records
    replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=2)
    alerts = f"{topic}-alerts"
    job = Job(spec=str(spec), input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts))
    execute(job, processes=processes)
    assert without_wall_clock(subscribe(kafka_bootstrap, alerts)) == file_alerts
    assert without_wall_clock(subscribe(kafka_bootstrap, estimates_topic(alerts))) == file_estimates
    triggered = [record for record in file_alerts if record["type"] == "fairness.trigger"]
    assert {record["trigger"] for record in triggered} == {"few-screens", "tpr-gap", "many-open"}
    assert all("windows" in record and "open" in record["trials"] for record in file_estimates)
