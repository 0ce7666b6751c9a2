"""The periodic shield for one stream of decisions (the fairness-shield paper's Dynamic shield, Def. 6, for the share
of 1s): at every period start it synthesizes, by dynamic programming conditioned on the history, the cheapest way to
end the period with the share of 1s over the whole history inside an interval, and flips accordingly. It is the
baseline of the energy-shield paper's Fig. 4, tuned once to S and once to L.

Within a period of T decisions, after t of them with k shielded 1s and a history of n decisions with K 1s before it,
the least expected number of flips still to make is

    v(T, k) = 0 if (K + k)/(n + T) ∈ [lo, hi], else ∞
    v(t, k) = p·min(v(t+1, k+1), 1 + v(t+1, k)) + (1 − p)·min(v(t+1, k), 1 + v(t+1, k+1))

for raw decisions that are 1 with probability p. A raw decision is kept when keeping it costs no more than flipping it
(ties kept); when v(0, 0) = ∞ no shield can end the period inside the interval and the shield stands aside, as Dynamic
does. The tables for many histories are computed at once, so a simulation of many runs steps them together.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fairstream.lab.periodic.baseline import check_decision, flip_verdict
from fairstream.shields.energy.shields import Counts, Verdict
from fairstream.shields.errors import ShieldError

BAD_PERIOD = "period length T must be an integer ≥ 1; got {period!r}"
BAD_INTERVAL = "the interval must satisfy 0 ≤ lo ≤ hi ≤ 1; got {interval}; it bounds a share of 1s"
BAD_P = "p must lie in [0, 1]; got {p!r}; it is the raw share of 1s"


def period_values(p: float, period: int, interval: tuple[float, float], seen: np.ndarray, ones: np.ndarray) -> np.ndarray:
    """v(t, k) for each history (seen[h], ones[h]): an array (histories, T + 1, T + 1), entries with k > t unused."""
    low, high = interval
    k = np.arange(period + 1)
    share = (ones[:, None] + k[None, :]) / (seen[:, None] + period)
    values = np.full((len(seen), period + 1, period + 1), np.inf)
    values[:, period] = np.where((share >= low - 1e-12) & (share <= high + 1e-12), 0.0, np.inf)
    for t in range(period - 1, -1, -1):
        up, down = values[:, t + 1, 1 : t + 2], values[:, t + 1, : t + 1]
        with np.errstate(invalid="ignore"):  # 0·∞ where p is 0 or 1: that branch never happens
            one = np.where(p > 0, p * np.minimum(up, 1 + down), 0.0)
            zero = np.where(p < 1, (1 - p) * np.minimum(down, 1 + up), 0.0)
        values[:, t, : t + 1] = one + zero
    return values


def keeps(values: np.ndarray, t: int, k: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Whether each raw decision is kept at step t with k shielded 1s, for tables `values` (one per run)."""
    rows = np.arange(len(k))
    one, zero = values[rows, t + 1, k + 1], values[rows, t + 1, k]
    kept, flipped = np.where(raw == 1, one, zero), np.where(raw == 1, zero, one)
    return kept <= 1 + flipped


@lru_cache(maxsize=8)
def _table(p: float, period: int, interval: tuple[float, float], seen: int, ones: int) -> np.ndarray:
    return period_values(p, period, interval, np.array([seen]), np.array([ones]))


@dataclass(frozen=True)
class StreamPeriodState:
    """Counts of the closed periods (`before`) and of the current one (`within`)."""

    before: Counts = Counts()
    within: Counts = Counts()


@dataclass(frozen=True)
class StreamPeriodicShield:
    """Dynamic periodic shield for one stream: the share of 1s over the whole history lies in `interval` at the end of
    every period of `period` decisions whenever some shield can achieve it (else it stands aside for the period).

    >>> shield = StreamPeriodicShield(p=0.3, period=10, interval=(0.4, 0.6))
    >>> shield.decide(0, StreamPeriodState(within=Counts(seen=9, ones=3)), u=0.5).shielded   # 3/9 must become 4/10
    1
    """

    p: float
    period: int
    interval: tuple[float, float]

    def __post_init__(self) -> None:
        if isinstance(self.period, bool) or not isinstance(self.period, int) or self.period < 1:
            raise ShieldError(BAD_PERIOD.format(period=self.period))
        low, high = self.interval
        if not 0 <= low <= high <= 1:
            raise ShieldError(BAD_INTERVAL.format(interval=self.interval))
        if not 0 <= self.p <= 1:
            raise ShieldError(BAD_P.format(p=self.p))

    def start(self) -> StreamPeriodState:
        """The state before any decision."""
        return StreamPeriodState()

    def decide(self, decision: int, state: StreamPeriodState, u: float) -> Verdict:
        """Shield one raw decision with the table of the current period, conditioned on the periods before it."""
        check_decision(decision)
        before, within = state.before, state.within
        values = _table(self.p, self.period, self.interval, before.seen, before.ones)
        stands_aside = not np.isfinite(values[0, 0, 0])
        kept = stands_aside or bool(keeps(values, within.seen, np.array([within.ones]), np.array([decision]))[0])
        shielded = decision if kept else 1 - decision
        seen, ones = before.seen + within.seen, before.ones + within.ones
        share = ones / seen if seen else sum(self.interval) / 2
        after = (ones + shielded) / (seen + 1)
        violation = within.seen + 1 == self.period and not self.interval[0] - 1e-12 <= after <= self.interval[1] + 1e-12
        if stands_aside:
            reason = "kept: no shield can end this period inside the interval; standing aside"
        else:
            reason = f"{'kept' if kept else 'flipped'}: the cheapest way to end the period with the share in {list(self.interval)}"
        return flip_verdict(decision, not kept, u, share, after, violation, reason)

    def next_state(self, state: StreamPeriodState, verdict: Verdict) -> StreamPeriodState:
        """The state after the verdict's shielded decision, closing the period when it is full."""
        within = Counts(state.within.seen + 1, state.within.ones + verdict.shielded)
        if within.seen == self.period:
            return StreamPeriodState(Counts(state.before.seen + within.seen, state.before.ones + within.ones))
        return StreamPeriodState(state.before, within)
