"""What a run wrote, read back from its files or topics, and put in a form two runs can be compared in."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.kafka import dead_letter_topic, estimates_topic, seals_topic
from fairstream.records.errors import ConnectorError
from fairstream.runner import FileRun

FAMILIES = ("alerts", "estimates", "dead_letters", "shielded")
"""Every record family a run writes: alerts (and shield interventions), estimates, dead letters, shielded decisions."""


def file_outputs(run: FileRun) -> dict[str, list[dict[str, Any]]]:
    return {
        "alerts": run.read("alerts.jsonl"),
        "estimates": run.read("estimates.jsonl"),
        "dead_letters": run.read("dead_letters.jsonl"),
        "shielded": run.read("decisions_shielded.jsonl"),
    }


def seal_records(bootstrap: str, alerts: str) -> list[dict[str, Any]]:
    """The seals a job wrote (its chains' checkpoints and closing seals), duplicates included."""
    return _topic(bootstrap, seals_topic(alerts))


def _topic(bootstrap: str, topic: str) -> list[dict[str, Any]]:
    try:
        return list(subscribe(bootstrap, topic, distinct=False, poll_seconds=0.3))
    except ConnectorError:
        return []  # never created: the run wrote nothing there


def kafka_outputs(bootstrap: str, alerts: str, shielded: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every record on a job's output topics, duplicates included, in each topic's partition order."""
    return {
        "alerts": _topic(bootstrap, alerts),
        "estimates": _topic(bootstrap, estimates_topic(alerts)),
        "dead_letters": _topic(bootstrap, dead_letter_topic(alerts)),
        "shielded": _topic(bootstrap, shielded) if shielded else [],
    }


def without_emitted_at(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in record.items() if k != "emitted_at"} for record in records]


def position_free(letters: list[dict[str, Any]]) -> Counter:
    """Dead letters as a multiset of (reason, detail, record): what stays the same however the input is partitioned
    (partition, offset, the running count and the id derived from them depend on the partitioning)."""
    return Counter((letter["reason"], letter["detail"], letter["record"]) for letter in letters)


def comparable(outputs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """A run's records in a form that must be equal for any partitioning: alerts and estimates in order (every
    field but `emitted_at`), dead letters as a multiset without their position, shielded decisions by id."""
    return {
        "alerts": without_emitted_at(outputs["alerts"]),
        "estimates": without_emitted_at(outputs["estimates"]),
        "dead_letters": position_free(outputs["dead_letters"]),
        "shielded": sorted((record["id"], repr(sorted(record.items()))) for record in outputs["shielded"]),
    }


def distinct(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Records by id; asserts that every repeat of an id is an exact copy (apart from `emitted_at`)."""
    seen: dict[str, dict[str, Any]] = {}
    for record in without_emitted_at(records):
        record_id = record["alert_id"]
        assert seen.setdefault(record_id, record) == record, f"two records with id {record_id} differ"
    return seen
