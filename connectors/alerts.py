"""Read alert records back from a Kafka topic, de-duplicated by alert id (the sink is at-least-once)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import orjson
from fairstream.errors import ConnectorError


def subscribe(
    bootstrap: str,
    topic: str,
    *,
    from_beginning: bool = True,
    follow: bool = False,
    poll_seconds: float = 0.5,
    wait_seconds: float = 0.0,
    distinct: bool = True,
) -> Iterator[dict[str, Any]]:
    """Yield each distinct record of `topic` once (every record, duplicates too, with `distinct=False`), in partition order.

    Without `follow` it stops once it has passed the end offsets it saw at start and a poll comes back
    empty (after waiting up to `wait_seconds` for the topic to appear); with `follow` it keeps waiting for new records until interrupted.
    Reads by partition assignment, without a consumer group, so it starts at once.
    """
    from kafka import KafkaConsumer, TopicPartition

    try:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=int(poll_seconds * 1000))
    except Exception as err:
        raise ConnectorError(f"cannot reach Kafka at {bootstrap}: {err}") from None
    try:
        deadline = time.monotonic() + wait_seconds
        partitions = consumer.partitions_for_topic(topic)
        while not partitions and (follow or time.monotonic() < deadline):
            time.sleep(poll_seconds)
            partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            raise ConnectorError(f"topic {topic!r} does not exist on {bootstrap}")
        assigned = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(assigned)
        if from_beginning:
            consumer.seek_to_beginning(*assigned)
        else:
            consumer.seek_to_end(*assigned)
        ends = consumer.end_offsets(assigned)
        seen: set[str] = set()
        while True:
            batches = consumer.poll(timeout_ms=int(poll_seconds * 1000))
            for batch in batches.values():
                for message in batch:
                    record = orjson.loads(message.value)
                    record_id = record.get("alert_id")
                    if distinct and record_id in seen:
                        continue
                    if record_id is not None:
                        seen.add(record_id)
                    yield record
            # an idle poll as well as the end offsets: some brokers report the end of a topic early
            if not follow and not batches and all(consumer.position(tp) >= ends[tp] for tp in assigned):
                return
    finally:
        consumer.close()
