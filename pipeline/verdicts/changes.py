"""Change verdicts: per part and pair of groups, a change detector fed the closed trials in close order, and the
`fairness.changed` records of the changes it finds (pure).

The average run length to a false alarm (`arl`, in trials) is shared over the detectors as α is shared over pairs:
evenly over the parts and pairs a spec declares, else over detectors as they start, the j-th taking 6/(π² j²) of the
alarm rate 1/arl. So the detectors' alarm rates sum to 1/arl: over every detector together, the false alarms expected
by any stopping time are at most its expected trials over `arl` (error over patience, the e-d-Bonferroni bound of
Dandapanthula & Ramdas, arXiv 2501.04130), whatever the dependence between pairs that share a group. No finite-ARL
detector bounds the chance of any false alarm across streams, so none is claimed. A detector's run length in pairs is
its share in trials over the trials a pair takes (two at 1:1, about ten at 1:9), so `arl` holds in trials whatever the
groups' sizes; after an alarm a detector learns the new gap afresh, so it holds between alarms too (restarts included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fairstream.estimators.pairing import RatioPairs
from fairstream.records.timefmt import format_instant
from fairstream.trials.outcomes import Cell, TrialOutcome, hidden

if TYPE_CHECKING:
    from fairstream.estimators.change import Change, GapDetector

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
    """One pair's pairing of outcomes and its detector, held to `arl` trials between false alarms: its run length in
    pairs is that over the trials a pair has taken so far (two at 1:1, about ten at 1:9)."""

    pairs: RatioPairs
    detector: GapDetector
    arl: float
    trials: int = 0
    formed: int = 0

    def push(self, first_group: bool, outcome: float, time: int) -> list[Change]:
        """One trial's outcome; the changes the pairs it completes raise."""
        self.trials += 1
        found = []
        for first, second in self.pairs.push(first_group, outcome):
            self.formed += 1
            self.detector.arl = self.arl / max(self.trials / self.formed, 2.0)
            change = self.detector.push(first - second, time)
            if change is not None:
                found.append(change)
        return found


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
                self.found.extend((part, pair, change) for change in detector.push(group == pair[0], outcome, trial.closed_at))

    def take(self) -> list[tuple[str, tuple[str, str], Change]]:
        found, self.found = self.found, []
        return found

    def _detectors_of(self, part: str, group: str) -> dict[tuple[str, str], PairDetector]:
        """The pairs `group` belongs to in `part`, each pair's detector started when its second group first appears."""
        from fairstream.estimators.change import GapDetector  # change verdicts alone need numpy

        known = self.groups.setdefault(part, [])
        detectors = self.detectors.setdefault(part, {})
        if group not in known:
            for other in known:
                pair = (min(group, other), max(group, other))
                if self.listed_pairs is None or pair in self.listed_pairs or pair[::-1] in self.listed_pairs:
                    self.started += 1
                    share = self._share(self.started)
                    detectors[pair] = PairDetector(RatioPairs(), GapDetector(self.detection.shift, share), share)
            known.append(group)
        return {pair: detector for pair, detector in detectors.items() if group in pair}

    def _share(self, order: int) -> float:
        """The run length, in trials, of the `order`-th detector started."""
        if self.detection.declared is not None:
            return self.detection.arl * self.detection.declared
        return self.detection.arl * math.pi**2 * order**2 / 6


def change_record(metric: str, part: str, pair: tuple[str, str], change: Change, detection: Detection, level: float = 0.05) -> dict[str, Any]:
    """The body of a `fairness.changed` record: the pair (first minus second), when the gap changed and when that was
    found, and the gap before and after with their confidence sequences at level 1 − `level` (beside the guard band)."""
    return {
        "metric": metric,
        "part": part,
        "pair": list(pair),
        "direction": change.direction,
        "changed_at": format_instant(change.changed_at),
        "found_at": format_instant(change.found_at),
        "since": format_instant(change.before.since),
        "gap_before": change.before.mean,
        "gap_before_interval": list(change.before_band.interval(level)),
        "gap_after": change.after.mean,
        "gap_after_interval": list(change.after_band.interval(level)),
        "pairs_before": change.before.pairs,
        "pairs_after": change.after.pairs,
        "shift": detection.shift,
        "arl": detection.arl,
        "assumption": ASSUMPTION,
    }
