"""Two groups 1:1, one decision a minute, each decision approved with its group's rate: a gap that holds at 0, or moves
to `gap` at decision `change_at`; the change detector read over every decision as the monitor reads it (pure, seeded)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairstream.estimators.change import Change, GapCusum
from fairstream.estimators.pairing import RatioPairs
from fairstream.verdicts.changes import PairDetector

BASE = 0.5


def decisions(seed: int, n: int, change_at: int | None = None, gap: float = 0.15, share: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Whether each decision is group a's (with probability `share`), and whether it was approved: both groups at
    `BASE` until `change_at`, then a at BASE + gap/2 and b at BASE − gap/2."""
    rng = np.random.default_rng(seed)
    in_a = rng.random(n) < share
    rate = np.full(n, BASE)
    if change_at is not None:
        after = np.arange(n) >= change_at
        rate = np.where(after, np.where(in_a, BASE + gap / 2, BASE - gap / 2), rate)
    return in_a, rng.random(n) < rate


def detect(in_a: np.ndarray, approved: np.ndarray, shift: float, arl: float) -> list[Change]:
    """Every alarm over the stream, with times counted in decisions, from the detector a monitor runs for one pair."""
    detector: PairDetector = PairDetector(RatioPairs(), GapCusum(shift, arl / 2), arl)
    found: list[Change] = []
    for index, (a, x) in enumerate(zip(in_a.tolist(), approved.tolist())):
        found.extend(detector.push(a, float(x), index))
    return found


@dataclass(frozen=True)
class ChangeStudy:
    """Stationary streams with any alarm; changed streams found after the change by the end, their median delay and
    the share of those whose estimated change point lies within `near` decisions of the truth."""

    runs: int
    decisions: int
    arl: float
    false_alarms: float
    found: float
    median_delay: float | None
    near_share: float
    near: int
    change_points: tuple[int, ...]
    """Each found stream's first change point after the move, in decisions."""


def study(runs: int, n: int = 10_000, change_at: int = 5_000, gap: float = 0.15, shift: float = 0.1, arl: float = 1e6, near: int = 750, seed: int = 0) -> ChangeStudy:
    """Measure `runs` stationary and `runs` changed streams."""
    alarms = sum(bool(detect(*decisions(seed + run, n), shift, arl)) for run in range(runs))
    delays, points = [], []
    for run in range(runs):
        found = [change for change in detect(*decisions(seed + runs + run, n, change_at, gap), shift, arl) if change.found_at >= change_at]
        if found:
            delays.append(found[0].found_at - change_at)
            points.append(found[0].changed_at)
    close = sum(abs(point - change_at) <= near for point in points)
    return ChangeStudy(
        runs, n, arl, alarms / runs, len(delays) / runs, float(np.median(delays)) if delays else None, close / len(delays) if delays else 0.0, near,
        tuple(points),
    )  # fmt: skip
