"""Did a gap change, and when: a two-sided, self-starting CUSUM on the differences of paired outcomes (pure).

Each pair (x, y) of two groups' outcomes gives z = x − y, whose mean is the gap. Before each new z the detector knows
the mean m and standard deviation s of the z since it last started (Hawkins' self-starting CUSUM, Journal of the Royal
Statistical Society D, 1987): u = (z − m) / s is close to standard normal while nothing changes, and

    S⁺ ← max(0, S⁺ + u − k),    S⁻ ← max(0, S⁻ − u − k),    k = shift / (2s),

alarm when either passes h. Siegmund's approximation of a one-sided CUSUM's average run length on standard normal
data, ARL(k, h) = (e^{2kb} − 2kb − 1) / (2k²) with b = h + 1.166, gives h for each side at twice the pairs the
detector may run on average before a false alarm, so the two sides together hold the target. The change point is the
first pair after the side's statistic last stood at 0; after an alarm the detector starts again from that pair, so
the next change is measured against the new gap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BURN_IN = 50
"""Pairs a (re)started detector only learns from: m and s need a few to mean anything."""
SPREAD_FLOOR = 0.05
"""The smallest s: pairs that all agree (every x and y equal) would make any change infinitely surprising."""
OVERSHOOT = 1.166
"""Siegmund's correction for the CUSUM's overshoot of its threshold (for standard normal steps)."""


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

    def interval(self, z: float) -> tuple[float, float]:
        """The mean's normal interval, z standard errors each way."""
        if self.pairs < 2:
            return -1.0, 1.0
        variance = max(self.squares / self.pairs - self.mean**2, 0.0) * self.pairs / (self.pairs - 1)
        half = z * math.sqrt(variance / self.pairs)
        return self.mean - half, self.mean + half


@dataclass(frozen=True)
class Change:
    """An alarm: the gap before and after the estimated change point, when it happened and when it was found."""

    direction: str
    """`up`: the gap (first group's rate minus the second's) grew; `down`: it shrank."""
    before: Segment
    after: Segment
    changed_at: int
    found_at: int


class GapCusum:
    """The detector of one pair of groups in one part (see the module)."""

    __slots__ = ("shift", "arl", "_pairs", "_total", "_squares", "_started", "_up", "_down", "_up_from", "_down_from")

    def __init__(self, shift: float, arl: float):
        self.shift = shift
        self.arl = arl
        self._restart(None)

    def _restart(self, at: int | None) -> None:
        self._pairs, self._total, self._squares, self._started = 0, 0.0, 0.0, at
        self._up, self._down = 0.0, 0.0
        self._up_from: tuple[int, float, float, int] | None = None
        self._down_from: tuple[int, float, float, int] | None = None
        """Per side: (pairs, total, squares) of the z before the side last left 0, and the time of its first pair after."""

    def push(self, z: float, time: int) -> Change | None:
        """Take the next pair's difference and its event time; a `Change` when this pair raises an alarm."""
        if self._started is None:
            self._started = time
        found = None
        if self._pairs >= BURN_IN:
            mean = self._total / self._pairs
            spread = max(math.sqrt(max(self._squares / self._pairs - mean * mean, 0.0)), SPREAD_FLOOR)
            u, k = (z - mean) / spread, self.shift / (2 * spread)
            h = threshold(k, 2 * self.arl)
            here = (self._pairs, self._total, self._squares, time)
            if self._up == 0.0:
                self._up_from = here
            if self._down == 0.0:
                self._down_from = here
            self._up, self._down = max(0.0, self._up + u - k), max(0.0, self._down - u - k)
            if self._up > h or self._down > h:
                found = self._change("up" if self._up > h else "down", z, time)
        self._pairs += 1
        self._total += z
        self._squares += z * z
        if found is not None:
            self._restart_after(found)
        return found

    def _change(self, direction: str, z: float, time: int) -> Change:
        pairs, total, squares, since = self._up_from if direction == "up" else self._down_from  # type: ignore[misc]
        before = Segment(pairs, total, squares, self._started)  # type: ignore[arg-type]
        after = Segment(self._pairs + 1 - pairs, self._total + z - total, self._squares + z * z - squares, since)
        return Change(direction, before, after, since, time)

    def _restart_after(self, change: Change) -> None:
        """Start again from the change point: the pairs after it are the new gap's first."""
        after = change.after
        self._restart(after.since)
        self._pairs, self._total, self._squares = after.pairs, after.total, after.squares
