"""What a shield's bound was synthesized for, checked as the shield runs (pure).

- The groups' raw rates and shares: each against what the shield was synthesized for (the exact rates and share of a
  synthesized shield, the ranges of `rates_within` for the adaptive one), by an anytime-valid detector
  (`RangeDetector`); all of them together warn falsely with probability at most `check_level` over the whole run.
- Labels (equal opportunity): a label is overdue once more than `label_delay` decisions followed its own, counted
  then, whether it comes later or never.
- Groups: a decision of a group the shield was not declared for passes unshielded, with that reason, and is counted.

When one breaks, the bound stated at the start no longer covers the stream: the shield goes on, and says so once in a
warning line, in every status record after, and in a Prometheus counter.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from fairstream.estimators.range_detector import RangeDetector

log = logging.getLogger("fairstream.shield")

UNDECLARED_SHOWN = 10
"""How many undeclared group values a status record names (the most frequent); the count covers them all."""

WHAT_IS_CHECKED = {
    "rates": "raw acceptance rate",
    "rates_within": "raw acceptance rate",
    "share": "share of the decisions",
}


@dataclass
class AssumptionWatch:
    """The shield's synthesis assumptions and their breaks so far."""

    monitor: str
    groups: tuple[str, ...]
    label_delay: int | None = None
    """Equal opportunity: a label arrives within this many later decisions."""
    assumed: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    """Per statistical assumption (`rates`, `rates_within`, `share`), per group, the range its mean keeps to (a single
    value as [v, v])."""
    check_level: float = 0.01
    """The false-warning level of all statistical checks together, over the whole run."""
    overdue: int = 0
    late_labels: int = 0
    largest_delay: int = 0
    undeclared: Counter[str] = field(default_factory=Counter)
    warned: set[str] = field(default_factory=set)
    detectors: dict[str, dict[str, RangeDetector]] = field(init=False)
    awaiting: deque[tuple[int, str]] = field(default_factory=deque)
    """Equal opportunity: (decision number, key) of each decision, oldest first, until it is past label_delay."""

    def __post_init__(self) -> None:
        checks = sum(len(values) for values in self.assumed.values())
        level = self.check_level / max(checks, 1)
        self.detectors = {
            name: {group: RangeDetector(*bounds, level) for group, bounds in values.items()} for name, values in self.assumed.items()
        }

    def observe(self, name: str, group: str, x: float) -> None:
        """One observation of group's side of assumption `name` (a raw decision, or 1 when a decision is the group's)."""
        detector = self.detectors.get(name, {}).get(group)
        if detector is not None and detector.update(x):
            low, high = detector.low, detector.high
            assumed = f"{low:g}" if low == high else f"within [{low:g}, {high:g}]"
            self._warn_once(
                name,
                f"shield {self.monitor}: group {group}'s {WHAT_IS_CHECKED[name]} left {assumed} (its mean so far {detector.mean:.3f} "
                f"over {detector.seen} decisions; false-warning level {detector.level:.2g}): the stated bound was synthesized for "
                f"{name} = the values in the spec and does not cover this stream; synthesize again for the {name} seen",
            )

    def decided(self, number: int, key: str) -> None:
        """Equal opportunity: decision `number` (from 1) with `key` now awaits its label."""
        if self.label_delay is not None:
            self.awaiting.append((number, key))

    def count_overdue(self, decisions: int, pending: dict[str, tuple[Any, ...]]) -> None:
        """After decision `decisions`: every label still pending with more than `label_delay` decisions after its own is
        overdue, counted once, now (`pending` maps key to a tuple whose third item is the decision's number)."""
        if self.label_delay is None:
            return
        while self.awaiting and decisions - self.awaiting[0][0] > self.label_delay:
            number, key = self.awaiting.popleft()
            waiting = pending.get(key)
            if waiting is not None and waiting[2] == number:
                self.overdue += 1
                self._warn_once(
                    "label_delay",
                    f"shield {self.monitor}: the label of decision {number} is overdue: {decisions - number} decisions "
                    f"followed it, more than label_delay = {self.label_delay}; the stated bound was synthesized for labels "
                    f"within {self.label_delay} and does not cover this stream; synthesize for the delays seen (shield.label_delay)",
                )

    def label(self, delay: int) -> None:
        """A label arrived `delay` decisions after its own (one past label_delay was counted overdue already)."""
        self.largest_delay = max(self.largest_delay, delay)
        if self.label_delay is not None and delay > self.label_delay:
            self.late_labels += 1

    def stranger(self, group: str) -> None:
        """A decision of a group the shield was not declared for: passed through unshielded."""
        self.undeclared[group] += 1
        self._warn_once(
            "groups",
            f"shield {self.monitor}: a decision of group {group!r}, which the shield was not declared for (groups: "
            f"{', '.join(self.groups)}), passed through unshielded; its bound covers the declared groups only",
        )

    def report(self) -> dict[str, Any]:
        """Per assumption the shield has: whether it has held so far, what it allows, and its breaks."""
        report: dict[str, Any] = {}
        if self.label_delay is not None:
            report["label_delay"] = {
                "held": not self.overdue, "allowed": self.label_delay, "breaks": self.overdue, "late_labels": self.late_labels,
                "largest_delay": self.largest_delay,
            }  # fmt: skip
        for name, detectors in self.detectors.items():
            found = {group: {"after": d.alarm_at} for group, d in sorted(detectors.items()) if d.broken}
            report[name] = {
                "held": not found,
                "allowed": {group: [d.low, d.high] for group, d in detectors.items()},
                "level": self.check_level,
                "breaks": len(found),
                "means": {group: d.mean for group, d in detectors.items()},
                "outside": found,
            }
        report["groups"] = {
            "held": not self.undeclared, "allowed": list(self.groups), "breaks": sum(self.undeclared.values()),
            "undeclared": dict(sorted(self.undeclared.most_common(UNDECLARED_SHOWN))),
        }  # fmt: skip
        return report

    def _warn_once(self, assumption: str, line: str) -> None:
        if assumption not in self.warned:
            self.warned.add(assumption)
            log.warning(line)
