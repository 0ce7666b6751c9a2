"""Alert records and the violation state machine: a violation when a verdict turns, a recovery when it ends."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from fairstream.records.timefmt import format_instant

VIOLATION = "fairness.violation"
RECOVERED = "fairness.recovered"
CERTIFIED = "fairness.certified"
UNCERTIFIED = "fairness.uncertified"
ESTIMATE = "fairness.estimate"
ALERT_TYPES = (VIOLATION, RECOVERED, CERTIFIED, UNCERTIFIED)
"""The records a monitor writes to the alert topic: a verdict or a certification turning."""

VIOLATED, SATISFIED, CERTIFIED_STATUS, INCONCLUSIVE = "violated", "satisfied", "certified", "inconclusive"
"""A part's status: violated; satisfied (point verdicts: the point estimate is within the threshold, no evidence
weighed); certified (the evidence puts it within the threshold at the verdict's level); inconclusive (neither yet)."""


def part_status(point: bool, violated: bool | None, certified: bool | None) -> str:
    """The status of a part from its alert state and certification."""
    if violated:
        return VIOLATED
    if point:
        return SATISFIED if violated is not None else INCONCLUSIVE
    return CERTIFIED_STATUS if certified else INCONCLUSIVE


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


class AlertTracker:
    """Remembers which parts are in violation and which are certified: a violation starts when a verdict turns violated
    and ends only when it turns clear (below the threshold by the hysteresis margin), so an estimate flapping around ε
    raises no storm; a certification starts and ends with the status."""

    def __init__(self) -> None:
        self.violated: dict[str, bool] = {}
        self.certified: dict[str, bool] = {}

    def update(self, part: str, violated: bool | None, clear: bool | None) -> str | None:
        """The record type to emit for this part now (VIOLATION, RECOVERED), or None; an undefined verdict changes nothing."""
        if self.violated.get(part, False):
            if clear:
                self.violated[part] = False
                return RECOVERED
            return None
        if violated:
            self.violated[part] = True
            return VIOLATION
        return None

    def certify(self, part: str, certified: bool) -> str | None:
        """The record type to emit as a part's certification starts (CERTIFIED) or ends (UNCERTIFIED), or None."""
        if certified == self.certified.get(part, False):
            return None
        self.certified[part] = certified
        return CERTIFIED if certified else UNCERTIFIED
