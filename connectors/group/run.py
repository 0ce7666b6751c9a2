"""One process of a job run by a Kafka consumer group: it folds the trials of the input partitions the group gives it,
runs the merges when the group gives it those, and stops when asked to or, with `--until-end`, once the merge has
written that every input partition has ended."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, TopicPartition

from fairstream.compiler.plan import Plan
from fairstream.connectors.group.logs import GroupTopics, claim_group, group_consumer
from fairstream.connectors.group.merge_stage import ENDED_KEY, MergeStage
from fairstream.connectors.group.trials_stage import TrialsStage
from fairstream.connectors.kafka import CONSUMER_CONFIG, PRODUCER_CONFIG, granted_producer, partition_counts
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.dataflow import collector
from fairstream.process.lifecycle import stop_requested
from fairstream.process.telemetry import SILENT, Telemetry
from fairstream.records.chain import combined_hash

log = logging.getLogger("fairstream.group")

POLL_WAIT = 0.01
"""Seconds a member that had nothing to do waits for input messages before it looks again."""


@dataclass(frozen=True)
class GroupOutcome:
    """What this process did: partitions it took over from another's checkpoint, times it took the merge over, steps
    the merge dropped as merged before, and whether the run reached its end."""

    partitions_taken: int
    merges_taken: int
    duplicate_steps: int
    ended: bool


class _EndWatch:
    """Whether the merge (in any process) has written that the job ended: the merge topic read as it grows."""

    def __init__(self, kafka: KafkaConnection, topics: GroupTopics):
        self._consumer = group_consumer(kafka.client({**CONSUMER_CONFIG, "group.id": f"{topics.merge}.watch", "enable.auto.commit": "false"}))
        self._consumer.assign([TopicPartition(topics.merge, 0, 0)])
        self.ended = False

    def poll(self) -> bool:
        for message in self._consumer.consume(100, 0):
            if message.error() is None and message.key() == ENDED_KEY:
                self.ended = True
            elif message.error() is not None and message.error().code() != KafkaError._PARTITION_EOF:
                log.warning("reading the merge topic: %s", message.error().str())
        return self.ended

    def close(self) -> None:
        self._consumer.close()


def run_group(
    kafka: KafkaConnection,
    group: str,
    topic: str,
    plans: Sequence[Plan],
    sink: Any,
    encode: Callable[[dict[str, Any]], Any],
    *,
    tail: bool,
    idle_after: float | None,
    snapshot_seconds: float,
    replication_factor: int | None = None,
    telemetry: Telemetry = SILENT,
) -> GroupOutcome:
    """Take part in consumer group `group` over `topic` until stopped or, not `tail`ing, until the job has ended."""
    topics = GroupTopics(group)
    topics.ensure(kafka, replication_factor)
    partitions = partition_counts(kafka, [topic])[topic]
    producer = granted_producer(kafka.client(PRODUCER_CONFIG))
    claim_group(kafka, topics, f"{combined_hash([plan.sha256 for plan in plans])}/{partitions}", producer)
    trials = TrialsStage(kafka, topics, topic, plans, partitions, producer, tail=tail, idle_after=idle_after, telemetry=telemetry)
    merge = MergeStage(
        kafka,
        topics,
        plans,
        partitions,
        producer,
        sink.build("write", 0, 1),
        encode,
        snapshot_seconds=snapshot_seconds,
        telemetry=telemetry,
    )
    watch = _EndWatch(kafka, topics)
    collector.settle()  # as a dataflow run does: what is built stays out of the collector's way
    saved_at = time.monotonic()
    ended = busy = False
    try:
        while not stop_requested():
            busy = trials.poll(0 if busy else POLL_WAIT) > 0  # only a member with nothing to do waits
            busy = merge.poll(0) > 0 or busy
            now = time.monotonic()
            if now - saved_at >= snapshot_seconds:
                saved_at = now
                trials.checkpoint()
            if not tail and (merge.ended_written or watch.poll()):
                ended = True
                break
        trials.checkpoint()
        merge.checkpoint()
    finally:
        with contextlib.suppress(Exception):  # after an error, what was checkpointed before stands
            trials.close()
        with contextlib.suppress(Exception):
            merge.close()
        watch.close()
        producer.flush(5.0)
    duplicates = merge.merge.duplicates if merge.merge is not None else 0
    return GroupOutcome(trials.taken, merge.taken, duplicates, ended)
