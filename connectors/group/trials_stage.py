"""Stage one of a group run: the input partitions the consumer group gives this process, each folding its own trials.

A partition taken over continues from its last checkpoint and re-reads the steps written after it (see
`dataflow.group.GroupPartition`); a partition given away is checkpointed first. Every step is written to the group's
steps topic, keyed by its partition, before the partition's next checkpoint names the offset after it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, KafkaError, TopicPartition

from fairstream import metrics
from fairstream.compiler.plan import Plan
from fairstream.connectors.broker_watch import gone_message
from fairstream.connectors.group.chunks import chunks
from fairstream.connectors.group.logs import GroupTopics, group_consumer, latest, partition_steps, produce, write_checkpoint
from fairstream.connectors.kafka import CONSUMER_CONFIG
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.dataflow.group import Checkpoint, GroupPartition, Step, decode, partition_work
from fairstream.process import readiness
from fairstream.process.telemetry import SILENT, Telemetry
from fairstream.records.errors import ConnectorError
from fairstream.records.events import ENDED, IDLE

log = logging.getLogger("fairstream.group")

LAG_EVERY = 1.0
"""Seconds between consumer-lag reports of the owned partitions."""

SESSION_TIMEOUT_MS = 10000
"""The group members' `session.timeout.ms` unless the Kafka settings give one: a process that stops answering loses
its partitions to the others after this long."""

HEARTBEAT_MS = 500
"""The members' `heartbeat.interval.ms` unless the Kafka settings give one: a member hears that the group is
rebalancing (a member joined or left) at its next heartbeat, and the partitions wait until then (librdkafka: 3 s)."""

ASSIGNMENT = "roundrobin"
"""How the group spreads partitions: the eager protocol (every member gives all back, then takes its share), which every
Kafka-protocol broker answers alike; a member keeps in memory what it gets back."""

_GONE = (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC, KafkaError._UNKNOWN_PARTITION)


def member_config(kafka: KafkaConnection, group: str, *, eof: bool) -> dict[str, Any]:
    """A consumer of the group `group`: offsets live in the checkpoints, partitions spread by `ASSIGNMENT`."""
    return kafka.client(
        {
            **CONSUMER_CONFIG, "group.id": group, "enable.auto.commit": "false", "auto.offset.reset": "earliest",
            "enable.partition.eof": str(eof).lower(), "session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": HEARTBEAT_MS,
        }
    ) | {"partition.assignment.strategy": ASSIGNMENT}  # fmt: skip


class TrialsStage:
    """The input partitions this process owns now, their steps written through `producer` (shared with the merge)."""

    def __init__(
        self,
        kafka: KafkaConnection,
        topics: GroupTopics,
        topic: str,
        plans: Sequence[Plan],
        partitions: int,
        producer: Any,
        *,
        tail: bool,
        idle_after: float | None,
        batch_size: int = 5000,
        telemetry: Telemetry = SILENT,
    ):
        self._kafka, self._topics, self._topic, self._plans = kafka, topics, topic, list(plans)
        self._partitions, self._producer, self._idle_after, self._batch_size = partitions, producer, idle_after, batch_size
        self._telemetry = telemetry
        self.owned: dict[int, GroupPartition] = {}
        self._steps_offset: dict[int, int] = {}
        """Per owned partition: the steps topic's offset after its last step written and acknowledged."""
        self._checkpointed: dict[int, int] = {}
        self._heard: dict[int, float] = {}
        self._quiet: set[int] = set()
        self._failures: list[str] = []
        self._lag_at = 0.0
        self._parked: dict[int, tuple[GroupPartition, int, int]] = {}
        self._written: dict[int, tuple[int, int]] = {}
        """Per partition: the step and count of parts of its checkpoint on the topic, deleted once a newer is written."""
        """The partitions given back at the last rebalance: (owner, steps offset, step checkpointed)."""
        self.taken = 0
        """Partitions taken over from a checkpoint (another process had them)."""
        self._consumer = group_consumer(member_config(kafka, topics.group, eof=not tail))
        self._consumer.subscribe([topic], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost)

    def poll(self, timeout: float) -> int:
        """Read what has come (waiting up to `timeout` s), write its steps; the number of messages read."""
        messages = self._consumer.consume(self._batch_size, timeout)
        batches: dict[int, tuple[list[int], list[Any]]] = {}
        ended: list[int] = []
        for message in messages:
            error = message.error()
            if error is None:
                offsets, values = batches.setdefault(message.partition(), ([], []))
                offsets.append(message.offset())
                values.append(message.value())
            elif error.code() == KafkaError._PARTITION_EOF:
                ended.append(message.partition())
            elif error.code() in _GONE:
                raise ConnectorError(gone_message(self._topic, self._kafka.bootstrap))
            else:
                raise ConnectorError(f"error consuming from Kafka topic {self._topic!r}: {error.str()}")
        now = time.monotonic()
        for partition, (offsets, values) in batches.items():
            if partition in self.owned:
                self._write(self.owned[partition].messages(offsets, values))
                self._heard[partition] = now
                self._quiet.discard(partition)
        for partition in ended:
            if partition in self.owned:
                self._write(self.owned[partition].marker(ENDED))
        for partition in self.owned:
            readiness.first_read(self._part(partition))
        if now - self._lag_at >= LAG_EVERY:
            self._lag_at = now
            self._report_lag()
        if self._idle_after is not None:
            for partition, owner in self.owned.items():
                if partition not in self._quiet and now - self._heard.get(partition, now) >= self._idle_after:
                    self._quiet.add(partition)
                    self._write(owner.marker(IDLE))
        self._producer.poll(0)
        return len(messages) - len(ended)

    def checkpoint(self, partitions: list[int] | None = None) -> None:
        """Wait for every step written so far, then checkpoint the `partitions` (default: all owned) that moved on."""
        self._flush()
        for partition in self.owned if partitions is None else partitions:
            owner = self.owned.get(partition)
            if owner is None or owner.replaying or self._checkpointed.get(partition) == owner.seq:
                continue
            checkpoint = owner.checkpoint(self._steps_offset[partition]).encode()
            self._written[partition] = write_checkpoint(self._producer, self._topics.checkpoints, str(partition), owner.seq, checkpoint, self._written.get(partition), self._delivered)
            self._checkpointed[partition] = owner.seq
        self._flush()

    def close(self) -> None:
        self._consumer.close()  # gives the partitions back: the revocation checkpoints them

    def _part(self, partition: int) -> str:
        return f"{partition}-{self._topic}"

    def _report_lag(self) -> None:
        """The messages after the last one read, from the high offset each partition's last fetch answered (no request);
        as the single-process source measures it (see `kafka_source`)."""
        for partition, owner in self.owned.items():
            try:
                _low, high = self._consumer.get_watermark_offsets(TopicPartition(self._topic, partition), cached=True)
            except Exception:  # no fetch answered yet
                continue
            if high >= 0 and owner.next_offset is not None:
                metrics.lag(partition, max(0, high - owner.next_offset), self._topic)

    def _write(self, steps: list[Step]) -> None:
        for step in steps:
            key = str(step.partition).encode()
            for part in chunks(step.encode()):
                produce(self._producer, self._topics.steps, part, key, self._delivered)

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is not None:
            self._failures.append(f"{msg.topic()}: {err.str()}")
        elif msg.topic() == self._topics.steps:
            partition = int(msg.key())
            self._steps_offset[partition] = max(self._steps_offset.get(partition, 0), msg.offset() + 1)

    def _flush(self) -> None:
        while self._producer.flush(1.0):
            if self._failures:
                break
        if self._failures:
            failures, self._failures = self._failures, []
            raise ConnectorError(
                f"the broker did not take {len(failures)} record(s) of consumer group {self._topics.group!r}; first: {failures[0]}"
            )

    def _assigned(self, consumer: Any, partitions: list[Any]) -> None:
        """Take the partitions the group gives: those this member gave back at the rebalance just before go on from
        memory (no member had them since); the others from their checkpoint and the steps written after it."""
        parked, self._parked = self._parked, {}
        wanted = [assigned.partition for assigned in partitions if assigned.partition not in parked]
        found = latest(self._kafka, self._topics.checkpoints) if wanted else {}
        checkpoints = {partition: decode(found[str(partition)][2]) if str(partition) in found else None for partition in wanted}
        for partition in wanted:
            if str(partition) in found:
                self._written[partition] = found[str(partition)][:2]
        since = min((0 if checkpoint is None else checkpoint.steps_offset for checkpoint in checkpoints.values()), default=0)
        steps, end = partition_steps(self._kafka, self._topics.steps, since, set(wanted)) if wanted else ({}, 0)  # one read for all
        now = time.monotonic()
        for assigned in partitions:
            partition = assigned.partition
            if partition in parked:
                owner, self._steps_offset[partition], self._checkpointed[partition] = parked[partition]
            else:
                owner = self._restored(partition, checkpoints[partition], [decode(value) for value in steps.get(partition, [])], end)
            self.owned[partition], self._heard[partition] = owner, now
            start = owner.resume_offset()
            assigned.offset = OFFSET_BEGINNING if start is None else start
            readiness.built(self._part(partition))
        consumer.assign(partitions)

    def _restored(self, partition: int, checkpoint: Checkpoint | None, steps: list[Step], end: int) -> GroupPartition:
        """A partition taken over: its trials from `checkpoint`, the `steps` written after it re-read (those before it are
        left out by their numbers); `end`: the steps topic's offset after its last message."""
        owner = GroupPartition(partition_work(self._plans, partition, self._partitions, self._telemetry), partition, checkpoint, steps)
        self._steps_offset[partition] = end
        self._checkpointed[partition] = owner.seq if checkpoint is not None else -1
        if checkpoint is not None or owner.pending:
            self.taken += 1
        log.info(
            "input partition %d taken over: from step %d (offset %s), %d step(s) to re-read", partition, owner.seq,
            "start" if owner.next_offset is None else owner.next_offset, len(owner.pending),
        )  # fmt: skip
        return owner

    def _revoked(self, consumer: Any, partitions: list[Any]) -> None:
        """The group rebalances: checkpoint the partitions given back and keep them, in case they come back."""
        given = [assigned.partition for assigned in partitions if assigned.partition in self.owned]
        if given:
            self.checkpoint(given)
        self._parked = {partition: (self.owned[partition], self._steps_offset[partition], self._checkpointed[partition]) for partition in given}
        self._drop(given)

    def _lost(self, consumer: Any, partitions: list[Any]) -> None:
        """Partitions taken away without a revocation (this process was too long silent): their new owner goes on from
        their last checkpoint, so nothing of them is written here any more."""
        self._parked = {}
        self._drop([assigned.partition for assigned in partitions])

    def _drop(self, partitions: list[int]) -> None:
        for partition in partitions:
            readiness.given_away(self._part(partition))
            for held in (self.owned, self._steps_offset, self._checkpointed, self._heard):
                held.pop(partition, None)
            self._quiet.discard(partition)
