"""Did a gap change, and when: a two-sided, self-starting CUSUM on the differences of paired outcomes (pure).

Each pair (x, y) of two groups' outcomes gives z = x − y, whose mean is the gap. Before each new z the detector knows
the mean m and standard deviation s of the z since it last started (Hawkins' self-starting CUSUM, Journal of the Royal
Statistical Society D, 1987): u = (z − m) / s is close to standard normal while nothing changes, and

    S⁺ ← max(0, S⁺ + u − k),    S⁻ ← max(0, S⁻ − u − k),    k = shift / (2s),

alarm when either passes h. Siegmund's approximation of a one-sided CUSUM's average run length on standard normal
data, ARL(k, h) = (e^{2kb} − 2kb − 1) / (2k²) with b = h + 1.166, gives h for each side at twice the pairs the
detector may run on average before a false alarm, so the two sides together hold the target.

At an alarm the change point is the maximum-likelihood split of the pairs since the detector started (the one that
maximises the two segments' difference in means, weighted by n₁n₂/n): far closer to the true change than where the
CUSUM last stood at 0, which drifts early when k is small. The gaps before and after are the two segments' means;
their intervals leave out a guard band of a quarter of the after segment on each side of the change point (the pairs
whose side is in doubt) and are confidence sequences, since the alarm is a stopping time that picked the segments.
After an alarm the detector starts again from the next pair, so the next change is measured against the new gap, learned
from pairs that did not raise the alarm.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from fairstream.estimators.means import sequence_width

BURN_IN = 50
"""Pairs a (re)started detector only learns from: m and s need a few to mean anything."""
SPREAD_FLOOR = 0.05
"""The smallest s: pairs that all agree (every x and y equal) would make any change infinitely surprising."""
OVERSHOOT = 1.166
"""Siegmund's correction for the CUSUM's overshoot of its threshold (for standard normal steps)."""
WINDOW = 20_000
"""Pairs kept for dating a change: past twice this, the oldest half is folded into sums (its pairs stay in the gap
before, but the change point is sought among the later ones)."""
GUARD = 4
"""The guard band around the change point, as a fraction 1/GUARD of the pairs after it, left out of the intervals."""


def threshold(k: float, arl: float) -> float:
    """h such that a one-sided CUSUM of reference k runs `arl` steps on average before a false alarm (Siegmund).

    >>> round(threshold(0.5, 930), 1)  # the textbook pair: k = 0.5, h = 5 gives an ARL of about 930
    5.0
    """
    target = 2 * k * k * arl
    y = max(1.0, math.log(target + 1))
    for _ in range(60):  # y = 2kb solves e^y − y − 1 = target; the fixed point converges from above log(target)
        y = math.log(target + 1 + y)
    return y / (2 * k) - OVERSHOOT


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


class GapCusum:
    """The detector of one pair of groups in one part (see the module)."""

    __slots__ = ("shift", "arl", "_pairs", "_total", "_squares", "_started", "_up", "_down", "_zs", "_times", "_folded")

    def __init__(self, shift: float, arl: float):
        self.shift = shift
        self.arl = arl
        self._restart(None)

    def _restart(self, at: int | None) -> None:
        self._pairs, self._total, self._squares, self._started = 0, 0.0, 0.0, at
        self._up, self._down = 0.0, 0.0
        self._zs, self._times = array("d"), array("q")
        """Every pair since the start (the latest `WINDOW` to 2·`WINDOW` of them), and its event time."""
        self._folded: Segment | None = None
        """The pairs folded out of the window, oldest first."""

    def push(self, z: float, time: int) -> Change | None:
        """Take the next pair's difference and its event time; a `Change` when this pair raises an alarm."""
        if self._started is None:
            self._started = time
        self._zs.append(z)
        self._times.append(time)
        found = None
        if self._pairs >= BURN_IN:
            mean = self._total / self._pairs
            spread = max(math.sqrt(max(self._squares / self._pairs - mean * mean, 0.0)), SPREAD_FLOOR)
            u, k = (z - mean) / spread, self.shift / (2 * spread)
            h = threshold(k, 2 * self.arl)
            self._up, self._down = max(0.0, self._up + u - k), max(0.0, self._down - u - k)
            if self._up > h or self._down > h:
                found = self._change("up" if self._up > h else "down", time)
        self._pairs += 1
        self._total += z
        self._squares += z * z
        if found is not None:
            self._restart_after(found)
        elif len(self._zs) >= 2 * WINDOW:
            self._fold()
        return found

    def _fold(self) -> None:
        """Fold the oldest `WINDOW` pairs into sums."""
        self._folded = _segment(self._zs[:WINDOW], self._times[0], self._folded)
        self._zs, self._times = self._zs[WINDOW:], self._times[WINDOW:]

    def _change(self, direction: str, time: int) -> Change:
        zs = self._zs
        split = change_point(zs)
        guard = (len(zs) - split) // GUARD
        return Change(
            direction,
            before=_segment(zs[:split], self._times[0], self._folded),
            after=_segment(zs[split:], self._times[split]),
            changed_at=self._times[split],
            found_at=time,
            before_band=_segment(zs[: max(split - guard, 0)], self._times[0], self._folded),
            after_band=_segment(zs[split + guard :], self._times[min(split + guard, len(zs) - 1)]),
        )

    def _restart_after(self, change: Change) -> None:
        """Start again after the alarm: the new gap is learned from the pairs that follow it, not from those that raised
        the alarm (their mean overstates the change, and a baseline learned from them would soon raise a false one)."""
        self._restart(None)
