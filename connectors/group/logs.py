"""The group's own topics: the steps every partition's owner writes, the checkpoints of the partitions' trials and the
merge's checkpoints; read back whole when a process takes a partition or the merge over."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from fairstream.connectors.group.chunks import Joiner, chunks, latest_values, part_keys
from fairstream.connectors.kafka import CONSUMER_CONFIG, ensure_topics
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.records.errors import ConnectorError, UsageError


def group_consumer(config: dict[str, Any]) -> Any:
    """A consumer for the group's work; settings librdkafka refuses (from --kafka-config or FAIRSTREAM_KAFKA_*) end the
    run in one line."""
    try:
        return Consumer(config)
    except KafkaException as err:
        raise ConnectorError(f"the Kafka settings do not make a consumer: {err.args[0].str()}") from None


READ_TIMEOUT = 30.0
"""Seconds a read of a group topic to its end may take before the run stops, naming the topic."""


class GroupTopics:
    """The names of a group's topics, all of one partition: `<group>.steps` (every partition's steps, in the order
    written), `<group>.checkpoints` and `<group>.merge` (compacted: the latest checkpoint of each partition, of the merge)."""

    def __init__(self, group: str):
        self.group = group
        self.steps = f"{group}.steps"
        self.checkpoints = f"{group}.checkpoints"
        self.merge = f"{group}.merge"

    def ensure(self, kafka: KafkaConnection, replication_factor: int | None) -> None:
        compacted = {"cleanup.policy": "compact"}
        ensure_topics(
            kafka, {self.steps: 1, self.checkpoints: 1, self.merge: 1}, replication_factor=replication_factor,
            configs={self.steps: {"retention.ms": "-1"}, self.checkpoints: compacted, self.merge: compacted},
        )  # fmt: skip


def read_to_end(kafka: KafkaConnection, topic: str, offset: int, keep: Callable[[bytes | None, bytes], None]) -> int:
    """Hand each message of the topic's one partition from `offset` to its end to `keep(key, value)`; return the offset
    after the last. Read by its own consumer (no group), so any process can read it at any time."""
    consumer = group_consumer(kafka.client({**CONSUMER_CONFIG, "group.id": f"{topic}.reader", "enable.auto.commit": "false", "enable.partition.eof": "true"}))
    try:
        consumer.assign([TopicPartition(topic, 0, offset)])
        position = offset
        stalled = 0.0
        while True:
            messages = consumer.consume(1000, 0.05)
            stalled = 0.0 if messages else stalled + 0.05
            if stalled >= READ_TIMEOUT:
                raise ConnectorError(
                    f"topic {topic!r} of consumer group {topic.rsplit('.', 1)[0]!r} could not be read to its end within {READ_TIMEOUT:.0f} s"
                )
            for message in messages:
                error = message.error()
                if error is None:
                    keep(message.key(), message.value())
                    position = message.offset() + 1
                elif error.code() == KafkaError._PARTITION_EOF:
                    return position
                else:
                    raise ConnectorError(f"error reading topic {topic!r}: {error.str()}")
    finally:
        consumer.close()


def messages_of(kafka: KafkaConnection, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    """Every (key, value) of the topic's one partition, in order (None: a tombstone)."""
    found: list[tuple[bytes | None, bytes | None]] = []
    read_to_end(kafka, topic, 0, lambda key, value: found.append((key, value)))
    return found


def latest(kafka: KafkaConnection, topic: str) -> dict[str, tuple[int, int, bytes]]:
    """The newest whole checkpoint of each name on a compacted topic: (its step, its count of parts, its value)."""
    return latest_values(messages_of(kafka, topic))


def marks(kafka: KafkaConnection, topic: str) -> dict[bytes, bytes]:
    """The last value of each key that names no checkpoint part (the job's claim, the end mark)."""
    return {key: value for key, value in messages_of(kafka, topic) if key is not None and value is not None and b"/" not in key}


def partition_steps(kafka: KafkaConnection, topic: str, offset: int, partitions: set[int]) -> tuple[dict[int, list[bytes]], int]:
    """The steps of each input partition of `partitions` in the steps topic from `offset` on, in the order written
    (whole, encoded), and the offset after the topic's last message: one read for every partition taken at once."""
    steps: dict[int, list[bytes]] = {}
    wanted = {str(partition).encode(): partition for partition in partitions}
    joiner = Joiner()

    def keep(key: bytes | None, value: bytes) -> None:
        if key in wanted and (whole := joiner.add(key, value)) is not None:
            steps.setdefault(wanted[key], []).append(whole)

    return steps, read_to_end(kafka, topic, offset, keep)


JOB_KEY = b"job"
"""The merge topic's key of what the group's checkpoints were made for."""


def claim_group(kafka: KafkaConnection, topics: GroupTopics, job: str, producer: Any) -> None:
    """Mark the group as this job's (its specs and input partitions), or stop in one line where it is another's: the
    checkpoints of other specs cannot be continued."""
    claimed = marks(kafka, topics.merge).get(JOB_KEY)
    if claimed is None:
        producer.produce(topics.merge, job.encode(), JOB_KEY)
        producer.flush(10.0)
    elif claimed.decode() != job:
        raise UsageError(f"consumer group {topics.group!r} holds the checkpoints of another job (other specs or input partitions): give this job a new --group name")


def produce(producer: Any, topic: str, value: bytes | None, key: bytes, on_delivery: Callable[[Any, Any], None] | None = None) -> None:
    """Produce one message, waiting for room in the producer's queue."""
    while True:
        try:
            producer.produce(topic, value, key, on_delivery=on_delivery)
            return
        except BufferError:
            producer.poll(0.1)


def write_checkpoint(
    producer: Any, topic: str, name: str, step: int, value: bytes, before: tuple[int, int] | None, on_delivery: Callable[[Any, Any], None] | None = None
) -> tuple[int, int]:
    """Write a checkpoint's parts to a compacted topic, then delete the parts of the one `before` it (its step and
    count of parts); the new one's (step, count)."""
    parts = chunks(value)
    for key, part in zip(part_keys(name, step, len(parts)), parts):
        produce(producer, topic, part, key, on_delivery)
    if before is not None and before[0] != step:
        for key in part_keys(name, *before):
            produce(producer, topic, None, key, on_delivery)
    return step, len(parts)
