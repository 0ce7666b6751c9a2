"""Alert records and the violation state machine: a violation when a verdict turns, a recovery when it ends."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from fairstream.records.timefmt import format_instant

VIOLATION = "fairness.violation"
RECOVERED = "fairness.recovered"
ESTIMATE = "fairness.estimate"


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
    """Remembers which parts are in violation: a violation starts when a verdict turns violated and ends only when it
    turns clear (below the threshold by the hysteresis margin), so an estimate flapping around ε raises no storm."""

    def __init__(self) -> None:
        self.violated: dict[str, bool] = {}

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
