"""Read a run's records for an audit: from its output directory (file and line) or from its Kafka topics (partition and
offset), each with where a record of its type is written, and refusing a JSON object that names a key twice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fairstream.audit.verify import Located
from fairstream.connectors.files import file_of
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.records.errors import InputError
from fairstream.records.segments import RETENTION, SEGMENTS, STATEMENTS, segments_of

RUN_FILES = ("alerts.jsonl", "estimates.jsonl", "dead_letters.jsonl", "seals.jsonl")
"""The files of a run whose records are chained (shielded decisions are the decision maker's own records)."""


def strict_record(raw: bytes) -> dict[str, Any]:
    """A record's JSON object, or a stand-in without a chain saying why it is none: not JSON, not an object, or an
    object naming a key twice (readers differ on which value they take, so a forged first value could pass the hash)."""
    try:
        record = json.loads(raw, object_pairs_hook=_refuse_duplicates)
    except _DuplicateKey as err:
        return {"alert_id": f"(a JSON object naming {err.args[0]!r} twice)"}
    except ValueError:
        return {"alert_id": "(not JSON)"}
    return record if isinstance(record, dict) else {"alert_id": "(not an object)"}


class _DuplicateKey(ValueError):
    pass


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise _DuplicateKey(name)
        found[name] = value
    return found


def directory_records(directory: str | Path) -> Iterator[Located]:
    """Every record of a run's output directory, file by file: each file's rotated segments oldest first, then the live
    file; then the statements of the segments a retention removed."""
    folder = Path(directory)
    names = [name for name in RUN_FILES if (folder / name).exists() or segments_of(folder, name)]
    if not folder.is_dir() or not names:
        raise InputError(f"{folder} holds no output of `fairstream run --out` ({', '.join(RUN_FILES)})")
    for name in names:
        for _number, path in segments_of(folder, name):
            yield from _file_records(path, f"{SEGMENTS}/{path.name}", name, live=False)
        if (folder / name).exists():
            yield from _file_records(folder / name, name, name, live=True)
    statements = folder / SEGMENTS / STATEMENTS
    if statements.exists():
        yield from _file_records(statements, f"{SEGMENTS}/{STATEMENTS}", STATEMENTS, live=False)


def _file_records(path: Path, source: str, family: str, *, live: bool) -> Iterator[Located]:
    """The records of one file; a record of the file's family has the file itself as its home."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            record = strict_record(line)
            if live and not line.endswith(b"\n") and "chain" not in record:  # the last line, its writer stopped mid-line
                yield Located(source, number, record, cut_short=True)
                continue
            home = file_of(record) if "type" in record and record["type"] != RETENTION else None
            yield Located(source, number, record, home=source if home == family else home)


def topic_records(kafka: KafkaConnection | str, alerts: str) -> Iterator[Located]:
    """Every record of a job's alert topic and its .estimates, .dlq and .seals topics, duplicates included, each
    partition in order."""
    from fairstream.connectors.alerts import topic_messages
    from fairstream.connectors.kafka import dead_letter_topic, estimates_topic, record_encoder, seals_topic

    encode = record_encoder(alerts)
    for topic in (alerts, estimates_topic(alerts), dead_letter_topic(alerts), seals_topic(alerts)):
        for partition, offset, value in topic_messages(kafka, topic):
            record = strict_record(value)
            yield Located(topic, offset, record, partition, _topic_of(encode, record))


def _topic_of(encode: Any, record: dict[str, Any]) -> str | None:
    """The topic a record of its type is written to (None where its type does not say)."""
    try:
        return encode(record).topic if record.get("type") not in (None, "shield.decision") else None
    except (KeyError, TypeError, AttributeError):
        return None
