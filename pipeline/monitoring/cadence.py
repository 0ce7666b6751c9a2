"""Which evaluations write an estimate record (pure): every one by default; under `publish.every`, the first, the
first at or after each period of event time (or each n-th evaluation since the last written), every one at which a
part's status or violating pair changed or an alert was written, and the input's last. Verdicts and alerts are reached
at every evaluation either way."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Standing = dict[str, tuple[Any, ...]]
"""Per part: what a reader of the estimate records must not miss a change of (see `standing_of`)."""


def standing_of(parts: dict[str, dict[str, Any]]) -> Standing:
    """Per part, its status, the pair its violation names and, for a constraint, the groups failing it: the run's
    summary files each first violation from the estimate record that shows it."""
    return {
        part: (body.get("status"), tuple(body.get("pair") or ()) if body.get("violated") else (), tuple(body.get("failing", ())))
        for part, body in parts.items()
    }


@dataclass
class PublishCadence:
    """`publish.every` as (unit, amount): ("time", milliseconds) or ("closes", evaluations); None writes every one."""

    every: tuple[str, int] | None = None
    standing: Standing | None = None
    """The parts' standing at the previous evaluation."""
    written_at: int | None = None
    """The instant of the last estimate written."""
    since: int = 0
    """Evaluations since the last estimate written."""

    def due(self, instant: int, parts: dict[str, dict[str, Any]], alerted: bool) -> bool:
        """Whether the evaluation at `instant` writes its estimate record (`alerted`: it wrote an alert)."""
        if self.every is None:
            return True
        standing = standing_of(parts)
        changed, self.standing = standing != self.standing, standing
        on_time = self._on_time(instant)
        self.since += 1
        if not (on_time or changed or alerted):
            return False
        self.written_at, self.since = instant, 0
        return True

    def skips(self, instant: int, standing: Standing) -> bool:
        """Whether an evaluation at `instant` whose verdicts turn nothing and whose parts stand as `standing` writes no
        estimate (then it is counted as such); where it would, nothing is counted, and `due` decides."""
        if self.every is None or standing != self.standing or self._on_time(instant):
            return False
        self.since += 1
        return True

    def _on_time(self, instant: int) -> bool:
        """The cadence asks for this evaluation's estimate: the first, the first of a new period, or the n-th since the last written."""
        assert self.every is not None
        unit, amount = self.every
        if self.written_at is None:
            return True
        return instant // amount > self.written_at // amount if unit == "time" else self.since + 1 >= amount

    def next_due(self, position: int, instants: Sequence[int]) -> int:
        """Of evaluations at `instants` (ascending) from `position` on, all judged quiet, the first the cadence writes
        (`len(instants)` where none is)."""
        assert self.every is not None
        unit, amount = self.every
        if self.written_at is None:
            return position
        if unit == "closes":
            return min(position + max(amount - self.since - 1, 0), len(instants))
        return max(position, bisect.bisect_left(instants, (self.written_at // amount + 1) * amount, lo=position))

    def skipped(self, evaluations: int) -> None:
        """Count evaluations judged quiet a batch at once (see `fairstream.monitoring.close_runs`)."""
        self.since += evaluations
