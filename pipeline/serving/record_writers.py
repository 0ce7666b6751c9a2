"""Where a served shield's records go, as `fairstream shield run` writes them: JSON-lines files in an output folder
that belongs to the server while it runs, or the Kafka topics of a shield run (I/O)."""

from __future__ import annotations

import logging
import os
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Protocol

from fairstream.connectors.files import OUTPUT_FILES, FileEncoder
from fairstream.connectors.kafka import PRODUCER_CONFIG, dead_letter_topic, ensure_topics, estimates_topic, record_encoder, seals_topic
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.process.ownership import holding
from fairstream.records.errors import ConnectorError

log = logging.getLogger("fairstream.shield")

SYNC_SECONDS = 1.0
"""Seconds between a file writer's syncs to disk (and at its close): a record is written when its answer is given."""


class RecordWriter(Protocol):
    def write(self, records: list[dict[str, Any]]) -> None: ...

    def sync(self) -> None: ...

    def close(self) -> int:
        """Sync and close; the records not delivered."""
        ...

    def describe(self) -> str: ...


class FileRecords:
    """The records as JSON lines in `out_dir` (the files of `shield run --out`, emptied at the start), the folder held
    by this server while it runs."""

    def __init__(self, out_dir: str | Path, max_dead_letter_bytes: int):
        self.out_dir = Path(out_dir)
        self._stack = ExitStack()
        self._stack.enter_context(holding(self.out_dir, "output folder", "--out"))
        self._files = {name: os.open(self.out_dir / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644) for name in OUTPUT_FILES}
        self._encode = FileEncoder(self.out_dir, max_dead_letter_bytes)

    def write(self, records: list[dict[str, Any]]) -> None:
        lines: dict[str, list[str]] = {}
        for record in records:
            routed = self._encode(record)
            if routed is not None:
                lines.setdefault(routed[0], []).append(routed[1])
        for name, texts in lines.items():
            data = memoryview("".join(f"{text}\n" for text in texts).encode())
            try:
                while data:
                    data = data[os.write(self._files[name], data) :]
            except OSError as err:
                raise ConnectorError(f"cannot write {self.out_dir / name}: {err.strerror}") from None

    def sync(self) -> None:
        for descriptor in self._files.values():
            os.fsync(descriptor)

    def close(self) -> int:
        self.sync()
        for descriptor in self._files.values():
            os.close(descriptor)
        self._stack.close()
        return 0

    def describe(self) -> str:
        return f"{self.out_dir}/decisions_shielded.jsonl and alerts.jsonl"


class KafkaRecords:
    """The records on the topics of `shield run --bootstrap`: shielded decisions to `<topic>.shielded`, interventions to
    the alert topic, statuses beside the estimates, dead letters and seals to theirs; each produced as its answer is
    given, acknowledged in the background and flushed at the close."""

    def __init__(self, kafka: KafkaConnection, topic: str, alerts: str, *, replication_factor: int | None = None):
        from confluent_kafka import Producer

        self.shielded = f"{topic}.shielded"
        self.alerts = alerts
        topics = {self.shielded: 1, alerts: 1, estimates_topic(alerts): 1, dead_letter_topic(alerts): 1, seals_topic(alerts): 1}
        ensure_topics(kafka, topics, replication_factor=replication_factor)
        self._encode = record_encoder(alerts, self.shielded)
        self._producer = Producer(kafka.client({"linger.ms": "0", **PRODUCER_CONFIG}))
        self.failed = 0

    def _delivered(self, error: Any, _message: Any) -> None:
        if error is not None:
            self.failed += 1
            log.error("a shield record was not acknowledged by Kafka: %s", error)

    def write(self, records: list[dict[str, Any]]) -> None:
        for record in records:
            message = self._encode(record)
            while True:
                try:
                    self._producer.produce(message.topic, message.value, message.key, headers=message.headers, on_delivery=self._delivered)
                    break
                except BufferError:  # the producer's queue is full: wait for acknowledgements
                    self._producer.poll(0.1)
        self._producer.poll(0)

    def sync(self) -> None:
        self._producer.poll(0)

    def close(self) -> int:
        return self._producer.flush(30) + self.failed

    def describe(self) -> str:
        return f"{self.shielded!r}; interventions on {self.alerts!r}"
