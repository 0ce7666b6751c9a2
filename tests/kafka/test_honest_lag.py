"""The consumer-lag gauge counts the messages after the last one read, also on a broker whose ListOffsets answer is
low: tansu answers it with the last batch's base offset + 1, so a lag computed from it misses every message of the
last batch but one. The gauge reads the high watermark of the fetch answers, which counts them all."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer

from fairstream import metrics
from fairstream.connectors.kafka import PRODUCER_CONFIG, ensure_topics
from fairstream.connectors.kafka_source import kafka_source
from fairstream.records.events import LineBlock

pytestmark = pytest.mark.kafka


def lag_of(topic: str) -> float:
    return metrics.LAG.labels(topic, "0")._value.get()


def test_the_lag_gauge_counts_every_message_not_yet_read_including_the_last_batch(kafka_bootstrap, topic, monkeypatch):
    ensure_topics(kafka_bootstrap, {topic: 1})
    producer = Producer({"bootstrap.servers": kafka_bootstrap, **PRODUCER_CONFIG, "linger.ms": "50"})
    for batch in range(4):  # four produce batches of 100: the last batch's base offset is 300
        for index in range(100):
            producer.produce(topic, b'{"n": %d}' % (batch * 100 + index))
        producer.flush(10)
    monkeypatch.setattr("fairstream.connectors.kafka_source.LAG_EVERY", 0.0)  # a report after every read, not once a second
    source = kafka_source(kafka_bootstrap, topic, tail=True, batch_size=30)
    (part,) = source.list_parts()
    partition = source.build_part("read", part, None)
    read, deadline = 0, time.monotonic() + 60
    try:
        while read == 0 and time.monotonic() < deadline:  # a consumer's first fetch may come after an idle marker
            batch = partition.next_batch()
            read = len(batch.offsets) if isinstance(batch, LineBlock) else sum(record.offset >= 0 for record in batch)
    finally:
        partition.close()
    assert 0 < read <= 30
    assert lag_of(topic) == 400 - read, f"lag {lag_of(topic)} after reading {read} of 400"
