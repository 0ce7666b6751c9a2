"""Two groups, one decision a minute, each decision approved with its group's rate: a gap that holds at 0, or moves
to `gap` at decision `change_at`; the change detector read over every decision as the monitor reads it (pure, seeded)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from fairstream.estimators.change import Change, GapDetector
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


def alarms(in_a: np.ndarray, approved: np.ndarray, shift: float, arl: float) -> Iterator[Change]:
    """Each alarm over the stream as it is raised, with times counted in decisions, from the detector a monitor runs
    for one pair."""
    detector = PairDetector(RatioPairs(), GapDetector(shift, arl), arl)
    for index, (a, x) in enumerate(zip(in_a.tolist(), approved.tolist())):
        yield from detector.push(a, float(x), index)


def detect(in_a: np.ndarray, approved: np.ndarray, shift: float, arl: float) -> list[Change]:
    """Every alarm over the stream."""
    return list(alarms(in_a, approved, shift, arl))


def first_after(in_a: np.ndarray, approved: np.ndarray, change_at: int, shift: float, arl: float) -> tuple[Change | None, bool]:
    """The first alarm at or after `change_at` (read no further), and whether any came before it."""
    early = False
    for change in alarms(in_a, approved, shift, arl):
        if change.found_at >= change_at:
            return change, early
        early = True
    return None, early


def pairs(in_a: np.ndarray, approved: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs' differences the detector reads, and the decision at which each was formed."""
    pairing, zs, at = RatioPairs(), [], []
    for index, (a, x) in enumerate(zip(in_a.tolist(), approved.tolist())):
        for first, second in pairing.push(a, float(x)):
            zs.append(first - second)
            at.append(index)
    return np.asarray(zs), np.asarray(at)
