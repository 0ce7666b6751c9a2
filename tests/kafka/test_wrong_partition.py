"""On a keyed topic, an event produced to a partition other than its key's is a `wrong_partition` dead letter, and
the other events give the results of the topic without it."""

from __future__ import annotations

import orjson
import pytest
from confluent_kafka import Producer
from kafka.partitioner.default import murmur2

from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.kafka import PRODUCER_CONFIG
from fairstream.connectors.replay import replay
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute, run_file
from tests.helpers import dead_letter_shows
from tests.kafka.outputs import comparable, file_outputs, kafka_outputs

pytestmark = pytest.mark.kafka


def test_a_stray_event_on_a_keyed_topic_is_dead_lettered_and_changes_nothing_else(kafka_bootstrap, topic, compas_csv, tmp_path):
    events = compas_events(compas_csv)
    write_jsonl(tmp_path / "events.jsonl", events)
    expected = comparable(file_outputs(run_file("compas_equalized_odds", tmp_path / "events.jsonl", tmp_path / "file", fmt="jsonl")))
    replay(events, kafka_bootstrap, topic, partitions=2)
    stray = {**events[-1], "id": "stray-1", "event": "SCREEN", "race": "Asian", "sex": "Male", "age_cat": "25 - 45", "decile_score": 10}
    wrong = 1 - (murmur2(b"stray-1") & 0x7FFFFFFF) % 2
    producer = Producer({"bootstrap.servers": kafka_bootstrap, **PRODUCER_CONFIG})
    producer.produce(topic, orjson.dumps(stray), b"stray-1", partition=wrong)
    producer.flush(10)
    alerts = f"{topic}-alerts"
    execute(Job(spec="compas_equalized_odds", input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts)), processes=2)
    got = comparable(kafka_outputs(kafka_bootstrap, alerts))
    letters = kafka_outputs(kafka_bootstrap, alerts)["dead_letters"]
    assert [(letter["reason"], letter["partition"]) for letter in letters] == [("wrong_partition", wrong)]
    assert orjson.loads(letters[0]["record"]) == dead_letter_shows(stray)
    assert got["alerts"] == expected["alerts"] and got["estimates"] == expected["estimates"]
