"""What a shield's bound was synthesized for, checked as the shield runs: labels no later than `label_delay` decisions
(equal opportunity), and the groups' raw rates inside `rates_within` (the adaptive shield). When one breaks, the bound
stated at the start no longer covers the stream: the shield goes on, and says so once in a warning line, in every
status record after, and in a Prometheus counter (pure)."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("fairstream.shield")

SLACK_SDS = 3.0
"""How many standard deviations of its estimate a group's rate may lie outside its range before the range is broken:
the adaptive shield's estimate of a rate in the range strays beyond it by chance, not by this much."""


@dataclass
class AssumptionWatch:
    """The breaks of a shield's synthesis assumptions so far."""

    monitor: str
    label_delay: int | None = None
    """Equal opportunity: a label arrives within this many later decisions."""
    rates_within: tuple[tuple[float, float], ...] | None = None
    """The adaptive shield: the ranges its groups' raw acceptance rates keep to, in the order of groups."""
    groups: tuple[str, ...] = ()
    memory: int = 300
    """The adaptive shield's estimation memory: its estimate's error shrinks as 1/√(decisions seen), down to 1/√memory."""
    late_labels: int = 0
    largest_delay: int = 0
    decisions_outside: int = 0
    outside: dict[str, float] = field(default_factory=dict)
    """Per group, its estimated rate when it was last found outside its range."""
    warned: set[str] = field(default_factory=set)

    def label(self, delay: int) -> None:
        """A label arrived `delay` decisions after its own."""
        if self.label_delay is None:
            return
        self.largest_delay = max(self.largest_delay, delay)
        if delay > self.label_delay:
            self.late_labels += 1
            self._warn_once(
                "label_delay",
                f"shield {self.monitor}: a label arrived {delay} decisions after its decision, later than label_delay = "
                f"{self.label_delay}: the stated bound was synthesized for labels within {self.label_delay} and does not "
                "cover this stream; synthesize for the delays seen (shield.label_delay)",
            )

    def rates(self, estimates: dict[str, tuple[float, int]]) -> None:
        """Per group, its estimated raw rate and the decisions it rests on, before one decision."""
        if self.rates_within is None:
            return
        found = False
        for group, (low, high) in zip(self.groups, self.rates_within, strict=True):
            rate, seen = estimates[group]
            slack = SLACK_SDS * 0.5 / math.sqrt(min(seen, self.memory) + 1)
            if not low - slack <= rate <= high + slack:
                found = True
                self.outside[group] = rate
                self._warn_once(
                    "rates_within",
                    f"shield {self.monitor}: group {group}'s raw acceptance rate is estimated at {rate:.3f}, outside rates_within "
                    f"[{low:g}, {high:g}] beyond its error: the stated bound was simulated for decision makers inside those "
                    "ranges and does not cover this one; widen shield.rates_within to the rates seen",
                )
        self.decisions_outside += found

    def report(self) -> dict[str, Any]:
        """What a status record says of each assumption the shield has: whether it has held so far, and its breaks."""
        report: dict[str, Any] = {}
        if self.label_delay is not None:
            report["label_delay"] = {
                "held": not self.late_labels, "allowed": self.label_delay, "late_labels": self.late_labels, "largest_delay": self.largest_delay,
            }  # fmt: skip
        if self.rates_within is not None:
            report["rates_within"] = {
                "held": not self.decisions_outside, "allowed": [list(bounds) for bounds in self.rates_within],
                "decisions_outside": self.decisions_outside, "outside": dict(sorted(self.outside.items())),
            }  # fmt: skip
        return report

    def _warn_once(self, assumption: str, line: str) -> None:
        if assumption not in self.warned:
            self.warned.add(assumption)
            log.warning(line)
