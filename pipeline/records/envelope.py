"""The record envelope (ground floor): every record type name, and the fields every monitor record starts with — a
deterministic id, the monitor, the type, the event time and the wall-clock time it was written."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from fairstream.records.timefmt import format_instant

VIOLATION = "fairness.violation"
RECOVERED = "fairness.recovered"
CERTIFIED = "fairness.certified"
UNCERTIFIED = "fairness.uncertified"
CHANGED = "fairness.changed"
"""A change detector found that a pair's gap moved, and when."""
MERGED = "fairness.violated_somewhere"
"""Merged over every pair of a monitor, the evidence says some pair violates the property, at the monitor's α."""
JOB_MERGED = "fairness.job_violated_somewhere"
"""Merged over the monitors of a job, their evidence says some monitor's property is violated, at the job's α."""
TRIGGER = "fairness.trigger"
"""A spec's trigger turned: its condition over the monitor's values became true (raised) or false again (cleared)."""
NOTICES = (CHANGED, MERGED, JOB_MERGED, TRIGGER)
"""The alerts beside a part's verdict turning: changes, merged alarms and triggers."""
EVIDENCE = "internal.merged_evidence"
"""A monitor's merged evidence at an evaluation, on its way to the job's merge: never written."""
ESTIMATE = "fairness.estimate"
ALERT_TYPES = (VIOLATION, RECOVERED, CERTIFIED, UNCERTIFIED)
"""The records a monitor writes to the alert topic: a verdict or a certification turning."""
INTERVENTION = "shield.intervention"
STATUS = "shield.status"
SHIELDED = "shield.decision"
"""A shielded decision: the decision maker's own record with the shield's answer in place."""
DEAD_LETTER = "pipeline.dead_letter"
SEAL = "pipeline.seal"
UNDELIVERED = "pipeline.undelivered"
"""An alert a notification endpoint never accepted: an operational notice, outside the hash chains."""


def alert_id(monitor: str, kind: str, instant: int, *names: str) -> str:
    """A deterministic id from the monitor, record type, event-time instant and the names involved (part, groups)."""
    text = "\x1f".join((monitor, kind, str(instant), *names))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def stamp(record: dict[str, Any], monitor: str, kind: str, instant: int, *names: str) -> dict[str, Any]:
    """Prefix a record body with the fields every record carries."""
    return {
        "alert_id": alert_id(monitor, kind, instant, *names),
        "monitor": monitor,
        "type": kind,
        "event_time": format_instant(instant),
        "emitted_at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        **record,
    }
