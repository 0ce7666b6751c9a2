"""Replay a file of events into a Kafka topic in event-time order: key = dependence key, Kafka timestamp = event time."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from fairstream.connectors.kafka import PRODUCER_CONFIG, ensure_topics
from fairstream.connectors.kafka_config import KafkaConnection, as_connection
from fairstream.reading.parse import field_getter, key_getter
from fairstream.records.errors import ConnectorError
from fairstream.records.events import Unreadable
from fairstream.records.timefmt import time_parser


@dataclass(frozen=True)
class ReplayResult:
    sent: int
    seconds: float
    partitions: int

    @property
    def rate(self) -> float:
        return self.sent / self.seconds if self.seconds > 0 else float("inf")


@dataclass(frozen=True)
class EventFields:
    """Which fields of a record hold the dependence key and the event time, and how the time is written."""

    key: str | tuple[str, ...] = "id"
    """One field, or the fields of a composite key."""
    time: str = "date"
    time_format: str = "iso"


def _payload(record: Any) -> tuple[bytes, dict[str, Any] | None]:
    """The bytes to send and, when the record is JSON, its parsed form (to read key and time); a row its reader could
    not read is sent as its bytes, for the monitor to dead-letter."""
    if isinstance(record, dict):
        return orjson.dumps(record), record
    raw = record.text if isinstance(record, Unreadable) else record if isinstance(record, bytes) else str(record).encode()
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw.rstrip(b"\r\n"), None
    return raw.rstrip(b"\r\n"), parsed if isinstance(parsed, dict) else None


def replay(
    records: Iterable[Any],
    kafka: KafkaConnection | str,
    topic: str,
    *,
    fields: EventFields = EventFields(),
    partitions: int = 1,
    speed: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReplayResult:
    """Produce every record (dicts, JSON lines) to `topic` with confluent-kafka (idempotent, acks=all).

    `speed` = event-time seconds per wall-clock second (None: as fast as possible). Records the
    monitor cannot read (no key, bad JSON) are still sent, so the monitor dead-letters them with the reason.
    """
    from confluent_kafka import Producer

    ensure_topics(kafka, {topic: partitions})
    producer = Producer(as_connection(kafka).client({"linger.ms": "20", "batch.num.messages": "10000", **PRODUCER_CONFIG}))
    errors: list[str] = []
    refused: list[str] = []

    def delivered(err, _msg) -> None:
        if err is not None and len(errors) < 5:
            errors.append(str(err))

    parse_time = time_parser(fields.time_format)
    key_of, time_of = key_getter(fields.key), field_getter(fields.time)
    sent = 0
    started = time.perf_counter()
    first_event: int | None = None
    for record in records:
        value, parsed = _payload(record)
        key = timestamp = None
        if parsed is not None:
            raw_key = key_of(parsed)
            key = None if raw_key is None else str(raw_key).encode()
            try:
                timestamp = parse_time(time_of(parsed))
            except (TypeError, ValueError, OverflowError):
                timestamp = None
        if speed is not None and timestamp is not None:
            first_event = timestamp if first_event is None else first_event
            wait = (timestamp - first_event) / 1000 / speed - (time.perf_counter() - started)
            if wait > 0:
                producer.flush()
                time.sleep(wait)
        kwargs = {"timestamp": timestamp} if timestamp is not None else {}
        refusal = _produce(producer, topic, value, key, delivered, kwargs)
        if refusal is not None:  # refused before sending (over message.max.bytes): the rest still goes
            refused.append(f"record {sent + len(refused) + 1:,} ({len(value):,} bytes): {refusal}")
            continue
        sent += 1
        if sent % 10000 == 0:
            producer.poll(0)
            if progress is not None:
                progress(10000)
    remaining = producer.flush(60)
    if progress is not None:
        progress(sent % 10000)
    if remaining or errors:
        raise ConnectorError(f"replay to {topic!r} failed: {errors[0] if errors else f'{remaining} messages undelivered'}")
    if refused:
        raise ConnectorError(f"replayed {sent:,} record(s) to {topic!r}; {len(refused):,} not sent, the first: {refused[0]}")
    return ReplayResult(sent, time.perf_counter() - started, partitions)


def _produce(producer: Any, topic: str, value: bytes, key: bytes | None, delivered: Callable[..., None], kwargs: dict[str, Any]) -> str | None:
    """Queue one record, waiting while the local queue is full; the reason when the client refuses it outright."""
    from confluent_kafka import KafkaException

    while True:
        try:
            producer.produce(topic, value, key, on_delivery=delivered, **kwargs)
            return None
        except BufferError:
            producer.poll(0.05)
        except KafkaException as err:
            return err.args[0].str()
