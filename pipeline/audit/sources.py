"""Read a run's records for an audit: from its output directory (file and line) or from its Kafka topics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from fairstream.audit.verify import Located
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.records.errors import InputError

RUN_FILES = ("alerts.jsonl", "estimates.jsonl", "dead_letters.jsonl")
"""The files of a run whose records are chained (shielded decisions are the decision maker's own records)."""


def directory_records(directory: str | Path) -> Iterator[Located]:
    """Every record of a run's output directory, file by file; a line that is not a JSON object is a record without a chain."""
    folder = Path(directory)
    names = [name for name in RUN_FILES if (folder / name).exists()]
    if not folder.is_dir() or not names:
        raise InputError(f"{folder} holds no output of `fairstream run --out` ({', '.join(RUN_FILES)})")
    for name in names:
        with (folder / name).open("rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    record = {"alert_id": "(not JSON)"}
                yield Located(name, number, record if isinstance(record, dict) else {"alert_id": "(not an object)"})


def topic_records(kafka: KafkaConnection | str, alerts: str) -> Iterator[Located]:
    """Every record of a job's alert topic and its .estimates and .dlq topics, duplicates included, each topic in partition order."""
    from fairstream.connectors.alerts import subscribe
    from fairstream.connectors.kafka import dead_letter_topic, estimates_topic

    for topic in (alerts, estimates_topic(alerts), dead_letter_topic(alerts)):
        bad: list[str] = []
        number = 0
        for number, record in enumerate(subscribe(kafka, topic, distinct=False, on_bad=bad.append), 1):
            yield Located(topic, number, record)
        for sentence in bad:  # not a JSON object: a record without a chain
            yield Located(topic, number + 1, {"alert_id": f"({sentence})"})
