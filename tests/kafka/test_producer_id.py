"""A sink's producer holds its producer id before the job reads: librdkafka grants an idempotent producer its id about
0.5 s after it starts, and a record produced earlier waits for it, so the first decisions after a start would wait."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer

from fairstream.connectors.kafka import PRODUCER_CONFIG, ensure_topics, granted_producer

pytestmark = pytest.mark.kafka


def first_delivery_seconds(producer: Producer, topic: str) -> float:
    """Seconds from producing one record to its acknowledgement."""
    started = time.perf_counter()
    producer.produce(topic, b"x")
    assert producer.flush(10) == 0
    return time.perf_counter() - started


def test_a_granted_producer_delivers_its_first_record_without_waiting_for_its_id(kafka_bootstrap, topic):
    ensure_topics(kafka_bootstrap, {topic: 1})
    config = {"bootstrap.servers": kafka_bootstrap, **PRODUCER_CONFIG}
    plain = first_delivery_seconds(Producer(config), topic)
    granted = first_delivery_seconds(granted_producer(config), topic)
    assert plain >= 0.3, f"a plain idempotent producer's first record took {plain:.3f} s: no id wait to remove"
    assert granted <= plain / 3, f"granted {granted:.3f} s vs plain {plain:.3f} s"


def test_a_producer_without_idempotence_is_not_held(kafka_bootstrap):
    started = time.perf_counter()
    granted_producer({"bootstrap.servers": kafka_bootstrap, **PRODUCER_CONFIG, "enable.idempotence": "false"})
    assert time.perf_counter() - started < 1.0
