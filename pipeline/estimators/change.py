"""Did a gap change, and when: a Shiryaev–Roberts e-detector on the differences of paired outcomes that knows neither
the gap before a change nor its size (pure).

Each pair (x, y) of two groups' outcomes gives z = x − y, whose mean is the gap. For a change that started j pairs ago
the evidence is the likelihood ratio of the pairs since the detector started, "shifted by δ from j on" against "one
mean throughout", taken on what does not depend on that mean (the pairs' contrasts): with n₁ pairs before and n₂ after,
D the difference of their means and v = s²(1/n₁ + 1/n₂) its variance,

    Λ_j(δ) = exp((δD − δ²/2) / v),    and over δ ~ N(0, τ²):    Λ_j = √(v / (v + τ²)) · exp(D²τ² / (2v(v + τ²))).

The gap before the change is never assumed: D compares the pairs after j with those before it, so a change found late
is still measured against the gap it left (a self-starting CUSUM, which standardises by the mean so far, absorbs it).
The detector raises an alarm when R = Σ_j Λ_j, summed over every start j, reaches the run length A it may take on
average before a false alarm. For Gaussian pairs of known spread each Λ_j is a martingale from j on (Wijsman's
representation of the contrasts' likelihood ratio), so E[R_τ] ≤ E[τ] at any stopping time and ARL ≥ A exactly
(Shin, Ramdas & Rinaldo, "E-detectors", 2024). Here the spread is the pairs' own, and the sum runs over a geometric
grid of starts (1.05 apart), each standing for the starts up to the next: the run length is measured, not bounded
(`fairstream bench changes`).

At an alarm the change point is the maximum-likelihood split of the pairs since the detector started (the one that
maximises the two segments' difference in means, weighted by n₁n₂/n). The gaps before and after are the two segments'
means; their intervals leave out a guard band of a quarter of the after segment on each side of the change point (the
pairs whose side is in doubt) and are confidence sequences, since the alarm is a stopping time that picked the
segments. After an alarm the detector starts again from the next pair, so the next change is measured against the
new gap, learned from pairs that did not raise the alarm.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from fairstream.estimators.means import sequence_width

BURN_IN = 50
"""Pairs a (re)started detector only learns from: the spread needs a few to mean anything."""
BEFORE = 10
"""The fewest pairs before a start: a change is never sought in the first pairs of a detector."""
SPREAD_FLOOR = 0.05
"""The smallest s: pairs that all agree (every x and y equal) would make any change infinitely surprising."""
GRID = 1.05
"""The ratio between neighbouring starts' distances from now, past the first 20 (every one of which is a start)."""
WINDOW = 20_000
"""Pairs kept for dating a change and as starts: past twice this, the oldest half is folded into sums (its pairs stay
in the gap before, but the change point is sought among the later ones)."""
GUARD = 4
"""The guard band around the change point, as a fraction 1/GUARD of the pairs after it, left out of the intervals."""


def _lookbacks(limit: int) -> np.ndarray:
    """The pairs since each start on the grid: 1, 2, …, 20, then growing by `GRID`, up to `limit`."""
    steps = [float(n) for n in range(1, 21)]
    while steps[-1] < limit:
        steps.append(max(steps[-1] + 1, math.floor(steps[-1] * GRID)))
    return np.asarray(steps)


LOOKBACKS = _lookbacks(2 * WINDOW)
WEIGHTS = np.log(np.diff(LOOKBACKS, append=LOOKBACKS[-1] + 1))
"""Each grid start stands for the starts up to the next one."""


@dataclass(frozen=True)
class Segment:
    """The pairs of one side of a change: how many, the sum and the sum of squares of their z, and when they began."""

    pairs: int
    total: float
    squares: float
    since: int

    @property
    def mean(self) -> float:
        return self.total / self.pairs if self.pairs else math.nan

    def interval(self, alpha: float) -> tuple[float, float]:
        """The mean's two-sided confidence sequence at level 1 − α (asymptotic, see `sequence_width`): valid at the alarm
        that chose the segment, which a fixed-time interval is not."""
        if self.pairs < 2:
            return -1.0, 1.0
        variance = max(self.squares / self.pairs - self.mean**2, 0.0) * self.pairs / (self.pairs - 1)
        half = sequence_width(alpha, self.pairs) * math.sqrt(max(variance, SPREAD_FLOOR**2) / self.pairs)
        return max(self.mean - half, -1.0), min(self.mean + half, 1.0)


def _segment(zs: Sequence[float], since: int, folded: Segment | None = None) -> Segment:
    """The pairs `zs` (and those folded before them) as a segment."""
    pairs, total, squares = len(zs), math.fsum(zs), math.fsum(z * z for z in zs)
    if folded is not None:
        return Segment(folded.pairs + pairs, folded.total + total, folded.squares + squares, folded.since)
    return Segment(pairs, total, squares, since)


def change_point(zs: Sequence[float]) -> int:
    """The split τ (pairs before it, 2 ≤ τ ≤ n − 2 where n allows) maximising (mean after − mean before)² · τ(n − τ)/n:
    the maximum-likelihood change point of a shift in mean (the first of equal ones)."""
    n = len(zs)
    if n < 4:
        return max(n - 1, 1)
    sums = list(accumulate(zs))
    best, best_score = 2, -1.0
    for split in range(2, n - 1):
        before = sums[split - 1] / split
        after = (sums[-1] - sums[split - 1]) / (n - split)
        score = (after - before) ** 2 * split * (n - split)
        if score > best_score:
            best, best_score = split, score
    return best


def log_evidence(after_sums: np.ndarray, after: np.ndarray, total: float, pairs: int, variance: float, scale: float) -> np.ndarray:
    """log Λ_j for each start: `after` pairs since it summing to `after_sums`, of `pairs` summing to `total`, spread
    `variance`, shifts drawn from N(0, `scale`²) (see the module)."""
    before = pairs - after
    gap = after_sums / after - (total - after_sums) / before
    v = variance * (1 / before + 1 / after)
    t2 = scale * scale
    return 0.5 * np.log(v / (v + t2)) + gap * gap * t2 / (2 * v * (v + t2))


@dataclass(frozen=True)
class Change:
    """An alarm: the gap before and after the estimated change point, when it happened and when it was found, and the
    segments beside the guard band that the gaps' intervals are of."""

    direction: str
    """`up`: the gap (first group's rate minus the second's) grew; `down`: it shrank."""
    before: Segment
    after: Segment
    changed_at: int
    found_at: int
    before_band: Segment
    after_band: Segment


class GapDetector:
    """The detector of one pair of groups in one part (see the module): `shift` is the scale of the changes it is
    tuned to (τ), `arl` the pairs it may take on average before a false alarm (A)."""

    __slots__ = ("shift", "arl", "_pairs", "_total", "_squares", "_started", "_zs", "_times", "_sums", "_folded", "evidence")

    def __init__(self, shift: float, arl: float):
        self.shift = shift
        self.arl = arl
        self.evidence = 0.0
        """log R after the latest pair (0 while the detector only learns)."""
        self._restart()

    def _restart(self) -> None:
        self._pairs, self._total, self._squares, self._started = 0, 0.0, 0.0, None
        self._zs, self._times = array("d"), array("q")
        """Every pair since the start (the latest `WINDOW` to 2·`WINDOW` of them), and its event time."""
        self._sums = np.zeros(2 * WINDOW + 1)
        """The running sums of the pairs in the window, from 0 before its first."""
        self._folded: Segment | None = None
        """The pairs folded out of the window, oldest first."""

    def push(self, z: float, time: int) -> Change | None:
        """Take the next pair's difference and its event time; a `Change` when this pair raises an alarm."""
        if self._started is None:
            self._started = time
        self._zs.append(z)
        self._times.append(time)
        self._pairs += 1
        self._total += z
        self._squares += z * z
        held = len(self._zs)
        self._sums[held] = self._sums[held - 1] + z
        found = None
        if self._pairs >= BURN_IN:
            self.evidence = self._log_sum()
            if self.evidence >= math.log(self.arl):
                found = self._change(time)
        if found is not None:
            self._restart()
        elif held >= 2 * WINDOW:
            self._fold()
        return found

    def _log_sum(self) -> float:
        """log R: the starts on the grid, each weighed by the starts it stands for."""
        held = len(self._zs)
        count = int(np.searchsorted(LOOKBACKS, min(held, self._pairs - BEFORE), side="right"))
        after = LOOKBACKS[:count]
        after_sums = self._sums[held] - self._sums[held - after.astype(np.intp)]
        mean = self._total / self._pairs
        variance = max(self._squares / self._pairs - mean * mean, SPREAD_FLOOR**2)
        terms = log_evidence(after_sums, after, self._total, self._pairs, variance, self.shift) + WEIGHTS[:count]
        top = float(terms.max())
        return top + math.log(float(np.exp(terms - top).sum()))

    def _fold(self) -> None:
        """Fold the oldest `WINDOW` pairs into sums."""
        self._folded = _segment(self._zs[:WINDOW], self._times[0], self._folded)
        self._zs, self._times = self._zs[WINDOW:], self._times[WINDOW:]
        self._sums[: WINDOW + 1] = self._sums[WINDOW:] - self._sums[WINDOW]

    def _change(self, time: int) -> Change:
        zs = self._zs
        split = change_point(zs)
        guard = (len(zs) - split) // GUARD
        before = _segment(zs[:split], self._times[0], self._folded)
        after = _segment(zs[split:], self._times[split])
        return Change(
            "up" if after.mean > before.mean else "down",
            before=before,
            after=after,
            changed_at=self._times[split],
            found_at=time,
            before_band=_segment(zs[: max(split - guard, 0)], self._times[0], self._folded),
            after_band=_segment(zs[split + guard :], self._times[min(split + guard, len(zs) - 1)]),
        )
