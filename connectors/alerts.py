"""Read alert records back from a Kafka topic, de-duplicated by alert id (the sink is at-least-once)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from fairstream.connectors.kafka_config import CONNECT_TIMEOUT, ClientErrors, KafkaConnection, as_connection
from fairstream.records.errors import ConnectorError


def subscribe(
    kafka: KafkaConnection | str,
    topic: str,
    *,
    from_beginning: bool = True,
    follow: bool = False,
    poll_seconds: float = 0.5,
    wait_seconds: float = 0.0,
    distinct: bool = True,
    on_bad: Callable[[str], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield each distinct record of `topic` once (every record, duplicates too, with `distinct=False`), in partition order.

    Without `follow` it stops once it has passed the end offsets it saw at start and a poll comes back
    empty (after waiting up to `wait_seconds` for the topic to appear); with `follow` it keeps waiting for new records until interrupted.
    Reads by partition assignment, without joining a consumer group, so it starts at once. A record that is not a JSON
    object is told to `on_bad` (a sentence naming it) and skipped, or without `on_bad` raises `ConnectorError`.
    """
    seen: set[str] = set()
    messages = topic_messages(kafka, topic, from_beginning=from_beginning, follow=follow, poll_seconds=poll_seconds, wait_seconds=wait_seconds)
    for partition, offset, value in messages:
        try:
            record = orjson.loads(value)
        except orjson.JSONDecodeError:
            record = None
        if not isinstance(record, dict):
            bad = f"the record at offset {offset} of {topic!r} partition {partition} is not a JSON object: is it a fairstream topic?"
            if on_bad is None:
                raise ConnectorError(bad)
            on_bad(bad)
            continue
        record_id = record.get("alert_id")
        if distinct and record_id in seen:
            continue
        if record_id is not None:
            seen.add(record_id)
        yield record


def topic_messages(
    kafka: KafkaConnection | str,
    topic: str,
    *,
    from_beginning: bool = True,
    follow: bool = False,
    poll_seconds: float = 0.5,
    wait_seconds: float = 0.0,
) -> Iterator[tuple[int, int, bytes]]:
    """Every message of `topic` as (partition, offset, value), each partition in order; see `subscribe` for when it stops."""
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, TopicPartition

    kafka = as_connection(kafka)
    errors = ClientErrors()
    consumer = Consumer(kafka.client({"group.id": "fairstream-alerts", "enable.auto.commit": "false", "error_cb": errors}))
    try:
        deadline = time.monotonic() + wait_seconds
        partitions = _partitions(consumer, topic, kafka, errors)
        while not partitions and (follow or time.monotonic() < deadline):
            time.sleep(poll_seconds)
            partitions = _partitions(consumer, topic, kafka, errors)
        if not partitions:
            raise ConnectorError(f"topic {topic!r} does not exist on {kafka.bootstrap}")
        start = OFFSET_BEGINNING if from_beginning else OFFSET_END
        consumer.assign([TopicPartition(topic, partition, start) for partition in partitions])
        ends = {partition: consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=CONNECT_TIMEOUT)[1] for partition in partitions}
        positions = {partition: -1 for partition in partitions}
        while True:
            messages = consumer.consume(num_messages=1000, timeout=poll_seconds)
            for message in messages:
                if message.error() is not None:
                    continue  # partition-end events and transient errors: librdkafka retries
                positions[message.partition()] = message.offset()
                yield message.partition(), message.offset(), message.value() or b""
            # an idle poll as well as the end offsets: some brokers report the end of a topic early
            if not follow and not messages and all(positions[p] + 1 >= ends[p] or not from_beginning for p in partitions):
                return
    finally:
        consumer.close()


def topic_exists(kafka: KafkaConnection | str, topic: str) -> bool:
    """Whether `topic` exists on the broker; raises `ConnectorError` when the broker cannot be reached."""
    from confluent_kafka import Consumer

    kafka = as_connection(kafka)
    errors = ClientErrors()
    consumer = Consumer(kafka.client({"group.id": "fairstream-alerts", "error_cb": errors}))
    try:
        return bool(_partitions(consumer, topic, kafka, errors))
    finally:
        consumer.close()


def _partitions(consumer: Any, topic: str, kafka: KafkaConnection, errors: ClientErrors) -> list[int]:
    try:
        metadata = consumer.list_topics(topic, timeout=CONNECT_TIMEOUT).topics.get(topic)
    except Exception as err:  # librdkafka raises KafkaException with a transport or timeout error
        raise kafka.unreachable(err, errors, consumer) from None
    if metadata is None or metadata.error is not None:
        return []
    return sorted(metadata.partitions)
