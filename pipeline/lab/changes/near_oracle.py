"""The change detector beside the known-parameter oracle on the same streams: how many moves each finds within 5,000
decisions, how soon, and how near the detector dates them; and how often streams that hold still raise an alarm
(lab, seeded; streams run in parallel processes)."""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache, partial

import numpy as np

from fairstream.lab.changes import oracle
from fairstream.lab.changes.streams import decisions, first_after, pairs

WITHIN = 5_000
"""Decisions after the move within which a find counts as found."""
NEAR = 750
"""Decisions from the true move within which a change point counts as dated near it."""
CALIBRATION = 2000
"""Streams that hold still the oracle's and the bound's thresholds are set on (the 99th percentile of their maxima)."""
AFTER = 40_000
"""Decisions read after the move at most: the delay of a move not found by then counts as endless."""


def split(share: float) -> str:
    """The groups' sizes as a ratio: 1:1, 1:9."""
    minority = min(share, 1 - share)
    return f"1:{round((1 - minority) / minority):g}"


@dataclass(frozen=True)
class Comparison:
    """`runs` streams whose gap moves from 0 to `gap` at decision `change_at`, groups `share`:(1 − `share`)."""

    gap: float
    share: float
    change_at: int
    runs: int
    detector: tuple[float, ...]
    """Decisions from the move to the detector's first alarm after it (inf: none within `AFTER`)."""
    oracle: tuple[float, ...]
    bound: tuple[float, ...]
    """The delays of the bound of detectors that do not know the gap before (`oracle.invariant`)."""
    offsets: tuple[int, ...]
    """Each found stream's first change point after the move less the move, in decisions."""
    early: int
    """Streams with an alarm before the move."""

    @staticmethod
    def found(delays: tuple[float, ...]) -> float:
        return sum(delay <= WITHIN for delay in delays) / len(delays)

    @staticmethod
    def median(delays: tuple[float, ...]) -> float:
        return float(np.median(delays))

    @property
    def near(self) -> float:
        """The share of found streams whose change point is within `NEAR` decisions of the move."""
        return sum(abs(offset) <= NEAR for offset in self.offsets) / len(self.offsets) if self.offsets else 0.0

    @property
    def ratio(self) -> float:
        """The detector's median delay over the oracle's."""
        return self.median(self.detector) / self.median(self.oracle)


def _endless(delay: int | None) -> float:
    return math.inf if delay is None else delay


def _one(seed: int, *, gap: float, share: float, change_at: int, shift: float, arl: float, limits: tuple[float, float]) -> tuple[float, float, float, int | None, bool]:
    in_a, approved = decisions(seed, change_at + AFTER, change_at, gap, share)
    change, early = first_after(in_a, approved, change_at, shift, arl)
    zs, at = pairs(in_a, approved)
    known = oracle.delay(zs, at, change_at, gap, share, limits[0])
    bound = oracle.delay(zs, at, change_at, gap, share, limits[1], statistic=oracle.invariant)
    found = math.inf if change is None else change.found_at - change_at
    offset = None if change is None else change.changed_at - change_at
    return found, _endless(known), _endless(bound), offset, early


@cache
def _limits(share: float, gap: float, seed: int, streams: int) -> tuple[float, float]:
    """The thresholds of the oracle and of the bound, each set on `streams` streams that hold still."""
    return oracle.threshold(share, gap, streams, seed), oracle.threshold(share, gap, streams, seed, statistic=oracle.invariant)


def compare(
    runs: int, gap: float, share: float, change_at: int, *, shift: float = 0.1, arl: float = 1e6, seed: int = 0, calibration: int = CALIBRATION
) -> Comparison:
    """Measure `runs` streams with the detector and the oracle."""
    one = partial(_one, gap=gap, share=share, change_at=change_at, shift=shift, arl=arl, limits=_limits(share, gap, seed, calibration))
    with ProcessPoolExecutor(max_workers=min(os.cpu_count() or 1, 8)) as pool:
        measured = list(pool.map(one, range(seed, seed + runs), chunksize=4))
    return Comparison(
        gap, share, change_at, runs, tuple(m[0] for m in measured), tuple(m[1] for m in measured), tuple(m[2] for m in measured),
        tuple(m[3] for m in measured if m[3] is not None), sum(m[4] for m in measured),
    )  # fmt: skip


def _still(seed: int, *, share: float, n: int, shift: float, arl: float) -> bool:
    change, _ = first_after(*decisions(seed, n, share=share), 0, shift, arl)
    return change is not None


def false_alarms(runs: int, share: float, *, n: int = oracle.HORIZON, shift: float = 0.1, arl: float = 1e6, seed: int = 0) -> int:
    """Of `runs` streams of `n` decisions whose gap holds at 0, how many raise any alarm."""
    still = partial(_still, share=share, n=n, shift=shift, arl=arl)
    with ProcessPoolExecutor(max_workers=min(os.cpu_count() or 1, 8)) as pool:
        return sum(pool.map(still, range(seed + 1_000_000, seed + 1_000_000 + runs), chunksize=8))
