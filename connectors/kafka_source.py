"""The Kafka source of the dataflow: each input partition yields `RawRecord`s, with idle and end markers; a job that
reads several co-partitioned topics reads partition i of each as input partition i."""

from __future__ import annotations

import operator
import time
from collections.abc import Sequence
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from fairstream import metrics
from fairstream.connectors.broker_watch import BrokerWatch, gone_message
from fairstream.connectors.kafka import CONSUMER_CONFIG, partition_counts
from fairstream.connectors.kafka_config import KafkaConnection, as_connection
from fairstream.engine.api import FixedPartitionedSource, StatefulSourcePartition
from fairstream.process.lifecycle import stop_requested
from fairstream.records.errors import ConnectorError, InputError
from fairstream.records.events import ENDED, IDLE, LineBlock, RawRecord

_ERROR, _OFFSET, _VALUE = operator.methodcaller("error"), operator.methodcaller("offset"), operator.methodcaller("value")
"""What the source reads of each of the consumer's messages."""

TOPIC_SEPARATOR = "+"
"""Joins the topics of a merged input partition's name (`0-screenings+outcomes`): a character no topic name may hold."""


class _ConsumerPartition:
    """One Kafka partition assigned to its own consumer (no consumer group): where the next read starts (the
    snapshot), and whether the partition's end was reached (read to its end, `enable.partition.eof`)."""

    def __init__(self, config: dict[str, Any], topic: str, part_idx: int, offset: int, batch_size: int):
        self.consumer = Consumer(config)
        self.consumer.assign([TopicPartition(topic, part_idx, offset)])
        self.topic = topic
        self.part_idx = part_idx
        self.offset = offset
        self.batch_size = batch_size
        self.eof = False

    def snapshot(self) -> int:
        return self.offset

    def close(self) -> None:
        self.consumer.close()


class _RecordPartition(StatefulSourcePartition[RawRecord, Any]):
    """Reads one Kafka partition's consumer: each message becomes `RawRecord(partition, offset, value,
    topic)`, `topic` empty unless the input partition reads several topics.

    After `idle_after` seconds without a message it sends one `IDLE` marker, so a partition with no
    traffic stops holding the watermark back (its next message makes it count again); a partition
    read to its end (`tail=False`) sends an `ENDED` marker, so the other partitions' evaluations go on.
    """

    def __init__(self, inner: _ConsumerPartition, partition: int, idle_after: float | None, watch: BrokerWatch | None = None, topic: str = ""):
        self._inner = inner
        self._partition = partition
        self._topic = topic
        self._idle_after = idle_after
        self._watch = watch
        self._last_message = time.monotonic()
        self._idle = False
        self._ended = False
        self._next_offset: int | None = None
        self._first_offset_asked = False
        self._lag_at = 0.0

    def _report_lag(self) -> None:
        """The messages after the last one read, from the high offset the consumer last fetched (no extra request)."""
        inner = self._inner
        try:
            _low, high = inner.consumer.get_watermark_offsets(TopicPartition(inner.topic, inner.part_idx), cached=True)
        except Exception:  # no fetch answered yet
            return
        if high >= 0 and self._next_offset is not None:
            metrics.lag(self._partition, max(0, high - self._next_offset), inner.topic)

    def _start_at_first_offset(self) -> None:
        """Assign the partition from its first offset as a number rather than the logical "beginning", with which
        librdkafka hands over a backlog in batches a fifth the size, at half the rate. Asked once: where the broker does
        not say within `WATERMARK_TIMEOUT`, the logical offset stays, so a broker that is down blocks no read again."""
        inner = self._inner
        self._first_offset_asked = True
        try:
            low, _high = inner.consumer.get_watermark_offsets(TopicPartition(inner.topic, inner.part_idx), timeout=WATERMARK_TIMEOUT)
        except Exception:  # the broker does not answer yet: BrokerWatch reports that
            return
        inner.consumer.assign([TopicPartition(inner.topic, inner.part_idx, low)])
        inner.offset = low

    def _read(self) -> Sequence[RawRecord]:
        """The next messages of the partition's consumer (end of partition, errors, the offset its snapshot resumes
        from), without message objects of eight fields, which cost several times the consume itself: a `LineBlock` of
        their values for an input partition that reads one topic, else (or where a value cannot be a line) a
        `RawRecord` each."""
        inner = self._inner
        if inner.eof:
            raise StopIteration
        if inner.offset == OFFSET_BEGINNING and not self._first_offset_asked:
            self._start_at_first_offset()
        messages = inner.consumer.consume(inner.batch_size, 0.001)
        if any(map(_ERROR, messages)):  # the partition's end or an error: the batch is read message by message
            offsets, values = self._with_errors(messages)
        else:
            offsets, values = list(map(_OFFSET, messages)), list(map(_VALUE, messages))
        if not offsets:
            return []
        inner.offset = offsets[-1] + 1
        block = LineBlock.of_records(self._partition, offsets, values) if not self._topic else None
        if block is not None:
            return block
        partition, topic = self._partition, self._topic
        return [RawRecord(partition, offset, value, topic) for offset, value in zip(offsets, values)]

    def _with_errors(self, messages: list[Any]) -> tuple[list[int], list[Any]]:
        """The offsets and values of a batch holding an error: up to the partition's end, the topic gone ends the
        run, another error ends it in one line."""
        inner = self._inner
        offsets: list[int] = []
        values: list[Any] = []
        for msg in messages:
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    inner.eof = True  # StopIteration at the next read, after this batch
                    break
                if error.code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC, KafkaError._UNKNOWN_PARTITION):
                    raise ConnectorError(gone_message(inner.topic, self._watch.bootstrap if self._watch is not None else "the broker"))
                raise ConnectorError(f"error consuming from Kafka topic {inner.topic!r}: {error.str()}")
            offsets.append(msg.offset())
            values.append(msg.value())
        return offsets, values

    def next_batch(self) -> Sequence[RawRecord]:
        if self._ended or stop_requested():
            raise StopIteration
        try:
            batch = self._read()
        except StopIteration:  # the end of a partition read to its end: it no longer holds the watermark back
            self._ended = True
            return [RawRecord(self._partition, ENDED, None, self._topic)]
        now = time.monotonic()
        if batch:
            self._next_offset = batch[-1].offset + 1  # type: ignore[union-attr]
        if now - self._lag_at >= LAG_EVERY:
            self._lag_at = now
            self._report_lag()
        if self._watch is not None and batch:
            self._watch.heard()
        elif self._watch is not None:
            self._watch.quiet()
        if batch:
            self._last_message, self._idle = now, False
        elif self._idle_after is not None and not self._idle and now - self._last_message >= self._idle_after:
            self._idle = True
            return [RawRecord(self._partition, IDLE, None, self._topic)]
        return batch

    def next_awake(self):
        return None

    def snapshot(self) -> Any:
        return self._inner.snapshot()

    def close(self) -> None:
        self._inner.close()


class _TopicsPartition(StatefulSourcePartition[RawRecord, dict[str, Any]]):
    """Partition i of several co-partitioned topics as one input partition: each topic's records tagged with its name,
    its own idle and end markers; ended once every topic has. Its snapshot is each topic's position."""

    def __init__(self, parts: dict[str, _RecordPartition]):
        self._parts = parts
        self._live = list(parts)

    def next_batch(self) -> list[RawRecord]:
        batch: list[RawRecord] = []
        for topic in list(self._live):
            try:
                batch.extend(self._parts[topic].next_batch())
            except StopIteration:
                self._live.remove(topic)
        if not self._live:
            raise StopIteration
        return batch

    def next_awake(self):
        return None

    def snapshot(self) -> dict[str, Any]:
        return {topic: part.snapshot() for topic, part in self._parts.items()}

    def close(self) -> None:
        for part in self._parts.values():
            part.close()


class RecordKafkaSource(FixedPartitionedSource[RawRecord, Any]):
    """The topics' partitions as `RawRecord`s (each partition's offset kept in the recovery store, never committed to
    Kafka), with idle markers when tailing. With several topics, input partition i reads partition i of each (their
    partition counts must agree)."""

    def __init__(self, kafka: KafkaConnection, topics: list[str], *, tail: bool, batch_size: int, config: dict[str, Any], idle_after: float | None, watch: BrokerWatch | None):
        self._kafka = kafka
        self._topics = topics
        self._tail = tail
        self._batch_size = batch_size
        self._config = config
        self._idle_after = idle_after
        self._watch = watch

    def list_parts(self) -> list[str]:
        topics = self._topics
        if len(topics) == 1:
            return [f"{index}-{topics[0]}" for index in range(partition_counts(self._kafka, topics)[topics[0]])]
        count = co_partitioned(self._kafka, topics)
        return [f"{index}-{TOPIC_SEPARATOR.join(topics)}" for index in range(count)]

    def build_part(self, step_id: str, for_part: str, resume_state: Any) -> StatefulSourcePartition:
        index, named = for_part.split("-", 1)
        partition = int(index)
        if TOPIC_SEPARATOR not in named:
            return _RecordPartition(self._consumer(named, partition, resume_state), partition, self._idle_after, self._watch)
        states = resume_state or {}
        parts = {topic: _RecordPartition(self._consumer(topic, partition, states.get(topic)), partition, self._idle_after, self._watch, topic) for topic in named.split(TOPIC_SEPARATOR)}
        return _TopicsPartition(parts)

    def _consumer(self, topic: str, partition: int, offset: int | None) -> _ConsumerPartition:
        config = {"group.id": "fairstream-unused", "enable.auto.commit": "false", "enable.partition.eof": str(not self._tail).lower(), **self._config}
        return _ConsumerPartition(config, topic, partition, OFFSET_BEGINNING if offset is None else offset, self._batch_size)


def co_partitioned(kafka: KafkaConnection | str, topics: list[str]) -> int:
    """The partition count the topics share; one line naming two topics whose counts differ, which cannot keep a
    key's events in one input partition."""
    counts = partition_counts(kafka, topics)
    first = topics[0]
    for topic in topics[1:]:
        if counts[topic] != counts[first]:
            raise InputError(
                f"topics {first!r} ({counts[first]} partitions) and {topic!r} ({counts[topic]}) are not co-partitioned: a job reads several "
                "topics only when they have equal partition counts and one partitioner (re-key one with fairstream replay)"
            )
    return counts[first]


WATERMARK_TIMEOUT = 1.0
"""Seconds a partition read from its beginning waits for the broker to tell its first offset."""

LAG_EVERY = 1.0
"""Seconds between consumer-lag reports of a partition."""

IDLE_AFTER = 5.0
"""Seconds without a message after which a tailed partition stops holding the watermark back."""


def kafka_source(
    kafka: KafkaConnection | str,
    topics: str | list[str],
    *,
    tail: bool = True,
    batch_size: int = 5000,
    idle_after: float | None = IDLE_AFTER,
    give_up_after: float | None = None,
) -> RecordKafkaSource:
    """The decision topics as `RawRecord`s; a broker that stops answering is reported (and given up on after
    `give_up_after` s), and a topic that is gone ends the run naming it, whether it is tailed or read to its end."""
    kafka = as_connection(kafka)
    topics = [topics] if isinstance(topics, str) else list(topics)
    return RecordKafkaSource(
        kafka,
        topics,
        tail=tail,
        batch_size=batch_size,
        config=kafka.client(CONSUMER_CONFIG),
        idle_after=idle_after if tail else None,
        watch=BrokerWatch(kafka, topics=topics, give_up_after=give_up_after),
    )
