"""Change verdicts: per part and pair of groups, a change detector fed the closed trials in close order, and the
`fairness.changed` records of the changes it finds (pure).

The average run length to a false alarm (`arl`, in trials) is shared over the detectors as α is shared over pairs:
evenly over the parts and pairs a spec declares, else over detectors as they start, the j-th taking 6/(π² j²) of the
alarm rate 1/arl. A pair takes two trials or more, so a detector's run length in pairs is half its share in trials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from fairstream.estimators.change import Change, GapCusum
from fairstream.estimators.means import normal_width
from fairstream.estimators.pairing import RatioPairs
from fairstream.records.timefmt import format_instant
from fairstream.trials.outcomes import Cell, TrialOutcome, hidden

ASSUMPTION = "independent trials; within a segment each group's outcomes share one rate (or mean)"


@dataclass(frozen=True)
class Detection:
    """What a change verdict looks for: the smallest change of a gap worth finding, and how rarely a stream that never
    changes may raise a false alarm (the average number of trials before one)."""

    shift: float
    arl: float
    declared: int | None = None
    """Detectors the spec fixes (parts × pairs), where it lists groups or pairs and the metric fixes its parts."""


@dataclass
class PairDetector:
    """One pair's pairing of outcomes and its detector."""

    pairs: RatioPairs
    detector: GapCusum


@dataclass
class ChangeEvidence:
    """Every part's detectors and the changes found since the last evaluation took them."""

    detection: Detection
    listed_pairs: tuple[tuple[str, str], ...] | None = None
    detectors: dict[str, dict[tuple[str, str], PairDetector]] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    started: int = 0
    found: list[tuple[str, tuple[str, str], Change]] = field(default_factory=list)

    def hold(self, trial: TrialOutcome, cells: list[Cell]) -> None:
        """Feed one closed trial's outcome in each part to the detectors of its group's pairs."""
        for part, group, value in cells:
            if hidden(part):
                continue
            outcome = float(value[0]) if isinstance(value, tuple) else float(value)
            for pair, detector in self._detectors_of(part, group).items():
                for first, second in detector.pairs.push(group == pair[0], outcome):
                    change = detector.detector.push(first - second, trial.closed_at)
                    if change is not None:
                        self.found.append((part, pair, change))

    def take(self) -> list[tuple[str, tuple[str, str], Change]]:
        found, self.found = self.found, []
        return found

    def _detectors_of(self, part: str, group: str) -> dict[tuple[str, str], PairDetector]:
        """The pairs `group` belongs to in `part`, each pair's detector started when its second group first appears."""
        known = self.groups.setdefault(part, [])
        detectors = self.detectors.setdefault(part, {})
        if group not in known:
            for other in known:
                pair = (min(group, other), max(group, other))
                if self.listed_pairs is None or pair in self.listed_pairs or pair[::-1] in self.listed_pairs:
                    self.started += 1
                    detectors[pair] = PairDetector(RatioPairs(), GapCusum(self.detection.shift, self._share(self.started) / 2))
            known.append(group)
        return {pair: detector for pair, detector in detectors.items() if group in pair}

    def _share(self, order: int) -> float:
        """The run length, in trials, of the `order`-th detector started."""
        if self.detection.declared is not None:
            return self.detection.arl * self.detection.declared
        return self.detection.arl * math.pi**2 * order**2 / 6


def change_record(metric: str, part: str, pair: tuple[str, str], change: Change, detection: Detection, level: float = 0.05) -> dict[str, Any]:
    """The body of a `fairness.changed` record: the pair (first minus second), when the gap changed and when that was
    found, and the gap before and after with their normal intervals at level 1 − `level`."""
    z = normal_width(level)
    return {
        "metric": metric,
        "part": part,
        "pair": list(pair),
        "direction": change.direction,
        "changed_at": format_instant(change.changed_at),
        "found_at": format_instant(change.found_at),
        "since": format_instant(change.before.since),
        "gap_before": change.before.mean,
        "gap_before_interval": list(change.before.interval(z)),
        "gap_after": change.after.mean,
        "gap_after_interval": list(change.after.interval(z)),
        "pairs_before": change.before.pairs,
        "pairs_after": change.after.pairs,
        "shift": detection.shift,
        "arl": detection.arl,
        "assumption": ASSUMPTION,
    }
