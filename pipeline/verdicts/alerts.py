"""A part's status and the violation state machine: a violation when a verdict turns, a recovery when it ends."""

from __future__ import annotations

from fairstream.records.envelope import CERTIFIED, RECOVERED, UNCERTIFIED, VIOLATION

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
