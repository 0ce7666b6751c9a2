"""CloudEvents attributes of the records fairstream writes, for the Kafka protocol binding in binary mode: the value
stays the record's JSON and the attributes travel as `ce_` headers, so routers and schema tooling read them without
parsing the value, and consumers of the plain JSON see no change (pure)."""

from __future__ import annotations

from typing import Any

SPEC_VERSION = "1.0"
TYPE_PREFIX = "io.fairstream."
TYPE_VERSION = ".v1"

SCHEMAS = {
    "fairness.estimate": "estimate",
    "fairness.violation": "alert",
    "fairness.recovered": "alert",
    "fairness.certified": "alert",
    "fairness.uncertified": "alert",
    "fairness.changed": "change",
    "fairness.violated_somewhere": "merged",
    "fairness.job_violated_somewhere": "job-merged",
    "fairness.trigger": "trigger",
    "shield.intervention": "shield-intervention",
    "shield.status": "shield-status",
    "pipeline.dead_letter": "dead-letter",
    "pipeline.undelivered": "undelivered",
    "pipeline.seal": "seal",
}
"""Each record type's JSON Schema, `schemas/<name>.schema.json` beside this module, whose `$id` is `schema_uri(name)`."""


def schema_uri(name: str) -> str:
    return f"urn:fairstream:schema:{name}:1"


def cloudevent_attributes(record: dict[str, Any]) -> dict[str, str]:
    """The CloudEvents attributes of one output record: `id` its alert id, `source` /fairstream/<monitor> (or
    /fairstream/pipeline for dead letters), `type` io.fairstream.<record type>.v1, `time` its event time (the moment
    the record speaks of), `dataschema` its JSON Schema's id, and `subject` the part (alerts), the group (a
    constraint's alerts), the trigger or the dead letter's reason.

    >>> cloudevent_attributes({"alert_id": "ab12", "monitor": "m", "type": "fairness.violation", "event_time": "2015-01-15T00:00:00Z", "part": "tpr"})
    {'specversion': '1.0', 'id': 'ab12', 'source': '/fairstream/m', 'type': 'io.fairstream.fairness.violation.v1', 'datacontenttype': 'application/json', 'dataschema': 'urn:fairstream:schema:alert:1', 'time': '2015-01-15T00:00:00Z', 'subject': 'tpr'}
    """
    attributes = {
        "specversion": SPEC_VERSION,
        "id": str(record.get("alert_id", "")),
        "source": f"/fairstream/{record.get('monitor') or 'pipeline'}",
        "type": f"{TYPE_PREFIX}{record['type']}{TYPE_VERSION}",
        "datacontenttype": "application/json",
    }
    if record["type"] in SCHEMAS:
        attributes["dataschema"] = schema_uri(SCHEMAS[record["type"]])
    if record.get("event_time"):
        attributes["time"] = str(record["event_time"])
    subject = record.get("part") or record.get("trigger") or record.get("reason")
    if subject:
        attributes["subject"] = str(subject) if "group" not in record else f"{subject}/{record['group']}"
    return attributes


def kafka_headers(record: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The attributes as Kafka headers of the binary mode: `ce_<name>`, and `content-type` for the data's type."""
    attributes = cloudevent_attributes(record)
    content_type = attributes.pop("datacontenttype")
    return [("content-type", content_type.encode()), *((f"ce_{name}", value.encode()) for name, value in attributes.items())]
