"""Records on the output topics are CloudEvents in the binary mode of the Kafka protocol binding: the CloudEvents SDK
reads each alert and estimate from a real broker, and its attributes are the record's id, monitor, type, event time
and part, while the value stays the record's JSON."""

from __future__ import annotations

import json

import pytest
from cloudevents.core.bindings.kafka import KafkaMessage, from_binary
from cloudevents.core.formats.json import JSONFormat
from confluent_kafka import Consumer, TopicPartition

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import estimates_topic
from fairstream.connectors.replay import replay
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
from tests.conftest import SPECS
from tests.test_output_schemas import record_schema, validator

pytestmark = pytest.mark.kafka


def messages(bootstrap: str, topic: str) -> list:
    """Every message of a topic, headers included, read by assignment from each of its partitions until a poll comes
    back empty (a high watermark may count a batch of several records as one offset)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cloudevents-test", "enable.auto.commit": False})
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
        consumer.assign([TopicPartition(topic, partition, consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[0]) for partition in partitions])
        found = []
        while (message := consumer.poll(2)) is not None:
            assert message.error() is None, message.error()
            found.append(message)
        return found
    finally:
        consumer.close()


@pytest.mark.parametrize(
    ("spec", "alert_kinds"),
    [("compas_equalized_odds", {"fairness.violation"}), ("rtlola_compas_equalized_odds", {"fairness.violation", "fairness.trigger"})],
)
def test_alerts_and_estimates_are_binary_mode_cloudevents(kafka_bootstrap, topic, compas_csv, spec, alert_kinds):
    replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=1)
    alerts = f"{topic}-alerts"
    job = Job(spec=str(SPECS / f"{spec}.yaml"), input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False),
              output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts))  # fmt: skip
    execute(job)
    for topic_name, kinds in ((alerts, alert_kinds), (estimates_topic(alerts), {"fairness.estimate"})):
        found = messages(kafka_bootstrap, topic_name)
        assert [json.loads(message.value()) for message in found] == list(subscribe(kafka_bootstrap, topic_name))
        assert {json.loads(message.value())["type"] for message in found} == kinds
        for message in found:
            record = json.loads(message.value())
            event = from_binary(KafkaMessage(headers=dict(message.headers()), key=message.key(), value=message.value()), JSONFormat())
            assert record["type"] in kinds
            assert event.get_specversion() == "1.0"
            assert event.get_id() == record["alert_id"]
            assert event.get_source() == f"/fairstream/{record['monitor']}"
            assert event.get_type() == f"io.fairstream.{record['type']}.v1"
            assert event.get_time().isoformat().replace("+00:00", "Z") == record["event_time"]
            assert event.get_datacontenttype() == "application/json"
            assert event.get_dataschema() == record_schema(record)["$id"]
            assert not list(validator(record).iter_errors(record))
            assert event.get_data() == record
            if record["type"] == "fairness.violation":
                assert event.get_subject() == record["part"]
            if record["type"] == "fairness.trigger":
                assert event.get_subject() == record["trigger"]
