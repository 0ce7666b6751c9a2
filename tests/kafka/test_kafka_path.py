"""The Kafka path on a real broker gives exactly the records of the file path, for 1 or 2 partitions and processes."""

from __future__ import annotations

import pytest

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import dead_letter_topic, estimates_topic
from fairstream.connectors.replay import replay
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute, run_file
from tests.conftest import SPECS, needs_bytewax

pytestmark = pytest.mark.kafka
SPEC = SPECS / "compas_equalized_odds.yaml"


def without_wall_clock(records):
    return [{k: v for k, v in record.items() if k != "emitted_at"} for record in records]


@pytest.fixture(scope="module")
def file_path_records(compas_csv, tmp_path_factory):
    result = run_file(SPEC, compas_csv, tmp_path_factory.mktemp("file"))
    return without_wall_clock(result.read("alerts.jsonl")), without_wall_clock(result.read("estimates.jsonl"))


@pytest.mark.parametrize(("partitions", "processes"), [(1, 1), pytest.param(2, 2, marks=needs_bytewax)])
def test_compas_through_kafka_equals_the_file_path(kafka_bootstrap, topic, compas_csv, file_path_records, partitions, processes):
    replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=partitions)
    alerts = f"{topic}-alerts"
    job = Job(spec=str(SPEC), input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts))
    execute(job, processes=processes)
    file_alerts, file_estimates = file_path_records
    assert without_wall_clock(subscribe(kafka_bootstrap, alerts)) == file_alerts
    assert without_wall_clock(subscribe(kafka_bootstrap, estimates_topic(alerts))) == file_estimates
    assert list(subscribe(kafka_bootstrap, dead_letter_topic(alerts))) == []
    assert len(file_alerts) >= 2 and len(file_estimates) > 700
