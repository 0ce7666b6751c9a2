"""One alarm across the monitors of a job: the average of their merged evidence, read at every evaluation of any of
them, raised where it reaches 1/α (pure).

Each monitor's merged evidence M_m is an e-process (`fairstream.verdicts.many_pairs.merged`), 1 before its first
evaluation; their average is one whatever the dependence between monitors that read the same decisions. The monitors'
evaluations reach the job in any interleaving, so the job judges an instant only once every monitor has reported past
it: the instant it raises the alarm, and what its record says, are the same however the work was spread.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from fairstream.verdicts.many_pairs.wealth import wealth

JOB_ASSUMPTION = "each monitor's merged evidence is an e-process (see its own assumption); any dependence between monitors"


@dataclass
class JobEvidence:
    """The monitors' merged evidence as reported, and whether the job's alarm has been raised."""

    monitors: tuple[str, ...]
    alpha: float
    history: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    """Per monitor, its (instant, log M) not yet judged, and the last judged one first."""
    reached: dict[str, int] = field(default_factory=dict)
    """Per monitor, the latest instant it has reported (its evaluations come in event-time order)."""
    finished: set[str] = field(default_factory=set)
    judged: int | None = None
    raised: bool = False

    def take(self, monitor: str, instant: int, log_evidence: float, final: bool = False) -> tuple[int, dict[str, Any]] | None:
        """A monitor's evidence at an evaluation (`final`: its input has ended); the instant and body of the job's alarm
        where an instant now judged raises it."""
        if not final:
            self.history.setdefault(monitor, []).append((instant, log_evidence))
        self.reached[monitor] = max(instant, self.reached.get(monitor, instant))
        if final:
            self.finished.add(monitor)
        if self.raised or len(self.reached) < len(self.monitors):
            return None
        settled = min(math.inf if name in self.finished else self.reached[name] for name in self.monitors)
        instants = sorted(
            {t for entries in self.history.values() for t, _ in entries if t <= settled and (self.judged is None or t > self.judged)}
        )
        for at in instants:
            latest = {name: self._latest(name, at) for name in self.monitors}
            average = math.fsum(wealth(value) for value in latest.values()) / len(self.monitors)
            self.judged = at
            if average >= 1 / self.alpha:
                self.raised = True
                return at, self._body(latest, average)
        self._prune()
        return None

    @property
    def done(self) -> bool:
        return len(self.finished) == len(self.monitors)

    def _latest(self, monitor: str, instant: int) -> float:
        """log M of `monitor` at its last evaluation at or before `instant` (0, M = 1, before its first)."""
        entries = self.history.get(monitor, [])
        index = bisect_right(entries, (instant, math.inf))
        return entries[index - 1][1] if index else 0.0

    def _prune(self) -> None:
        """Keep of each monitor's history its last judged entry and what comes after it."""
        for name, entries in self.history.items():
            index = bisect_right(entries, (self.judged, math.inf)) if self.judged is not None else 0
            self.history[name] = entries[max(index - 1, 0) :]

    def _body(self, latest: dict[str, float], average: float) -> dict[str, Any]:
        total = average * len(self.monitors)
        return {
            "alpha": self.alpha,
            "log_evidence": math.log(average),
            "log_threshold": math.log(1 / self.alpha),
            "monitors": [
                {"monitor": name, "log_evidence": latest[name], "share_of_evidence": wealth(latest[name]) / total}
                for name in sorted(self.monitors, key=lambda name: (-latest[name], name))
            ],
            "assumption": JOB_ASSUMPTION,
        }
