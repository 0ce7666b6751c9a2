"""Anytime-valid tests that two groups' rates differ by more than ε, or by less, by betting (Waudby-Smith & Ramdas;
Chugg et al. 2023).

Outcomes are paired: one outcome x of group a meets y, the mean of the next r outcomes of group b (or the other way
round when b is the smaller group). A bettor starts with wealth 1 and stakes a fraction λ_k, fixed before pair k
arrives, on x − y exceeding ε: K_n = Π (1 + λ_k (x_k − y_k − ε)). If E[x − y] ≤ ε (H0⁺), K is a nonnegative
supermartingale and, by Ville's inequality, P(∃n: K_n ≥ 1/α) ≤ α: the test may be read after every pair, forever,
without inflating false alarms. A mirror bettor tests H0⁻: E[y − x] ≤ ε. Two more bettors stake on the gap staying
inside: on ε − (x − y) against p_a − p_b ≥ ε and on ε + (x − y) against p_b − p_a ≥ ε; when both have reached 1/α,
|p_a − p_b| < ε is *certified* at level α (each one-sided null rejected at α, an intersection–union test).

Why pairing keeps pairs independent: `RatioPairs` decides which outcomes meet from the order in which they are handed
to it within each group and from how many of each group it has been handed and left waiting (r is about the ratio of
those counts), never from the values. The monitor hands them over in the order their trials *opened* (see
`fairstream.estimators.opening`), which an outcome decided later cannot change; so if each group's outcomes are
i.i.d., every outcome in a pair is a fresh draw, independent of the other group and of every earlier pair, and
E[x − y] = p_a − p_b, which is all the supermartingale argument needs, however late and in whatever order the labels
arrive. Averaging r outcomes of the larger group uses every trial of both groups, so an unequal split costs what it
costs a fixed-sample z test: the pair's variance is σ_a² + σ_b²/r.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal

import numpy as np

ONS_GAIN = 2 / (2 - math.log(3))
"""Step size c of the online Newton step bets (Cutkosky & Orabona), as in Chugg et al."""
BET_CAP = 0.6
"""Largest bet λ where the payoff cannot fall far below zero: high enough that a large gap is found about as soon as
a fixed-sample test would find it, low enough that noise in the first pairs does not cost a small gap much."""
LEAST_FACTOR = 0.25
"""Every factor 1 + λ·payoff stays at least this: λ ≤ (1 − LEAST_FACTOR)/L for a payoff that can fall to −L."""


def bet_cap(worst_loss: float) -> float:
    """The largest bet on a payoff that can fall to −`worst_loss` (1 + ε for a violation side, 1 − ε for a
    certification side)."""
    return min(BET_CAP, (1 - LEAST_FACTOR) / worst_loss)


BAD_EPSILON = "epsilon must lie in [0, 1); got {epsilon}; the gap of two rates lies in [-1, 1]"
BAD_OUTCOME = "outcomes must lie in [0, 1]; got x = {x}, y = {y}; pass 0/1 indicators or rescale bounded outcomes"
BAD_RATIO = "the ratio threshold τ must lie in (0, 1]; got {threshold}; the four-fifths rule is 0.8"
BAD_ALPHA = "alpha must lie in (0, 1); got {alpha}; pass the false-alarm rate, e.g. 0.05"


def _ons_step(bet, sum_z2, payoff, cap):
    """Log-factor of `payoff` (x − y − ε) at the current bet, and the next bet by online Newton step, at most `cap`
    (floats or arrays)."""
    factor = 1 + bet * payoff
    z = payoff / factor
    sum_z2 = sum_z2 + z * z
    return np.log(factor), np.minimum(np.maximum(bet + ONS_GAIN * z / sum_z2, 0.0), cap), sum_z2


def log_wealth_paths(payoffs: np.ndarray, cap: float = BET_CAP) -> np.ndarray:
    """Log-wealth after each payoff (x_k − y_k − ε, or ε ∓ (x_k − y_k)) of online-Newton-step bettors whose bets are
    at most `cap` (see `bet_cap`): time on the last axis, one independent bettor per index of the leading axes.
    `GapBet` makes the same bets one pair at a time.

    >>> log_wealth_paths(np.array([0.5, 0.5, -0.5])).round(4)
    array([ 0.    ,  0.2624, -0.0943])
    """
    payoffs = np.asarray(payoffs, dtype=float)
    bet, sum_z2, log_wealth = np.zeros(payoffs.shape[:-1]), np.ones(payoffs.shape[:-1]), np.zeros(payoffs.shape[:-1])
    paths = np.empty_like(payoffs)
    for k in range(payoffs.shape[-1]):
        log_factor, bet, sum_z2 = _ons_step(bet, sum_z2, payoffs[..., k], cap)
        log_wealth = log_wealth + log_factor
        paths[..., k] = log_wealth
    return paths


class GapBet:
    """Sequential tests for one pair of groups, fed paired outcomes: that |p_a − p_b| > ε (one bettor per side, a
    violation) and that |p_a − p_b| < ε (two bettors that must both win, a certification).

    >>> bet = GapBet(epsilon=0.1)
    >>> for _ in range(30):
    ...     bet.update(1.0, 0.0)
    >>> bet.pairs, bet.rejects(0.05), bet.certifies(0.05)
    (30, 'a>b', False)
    """

    __slots__ = ("epsilon", "pairs", "_bet", "_sum_z2", "_log_wealth", "_peak", "_cap")

    def __init__(self, epsilon: float):
        if not 0 <= epsilon < 1:
            raise ValueError(BAD_EPSILON.format(epsilon=epsilon))
        self._start(epsilon)

    def _start(self, epsilon: float) -> None:
        self.epsilon = epsilon
        self.pairs = 0
        self._bet = np.zeros(4)
        self._sum_z2 = np.ones(4)
        self._log_wealth = np.zeros(4)
        self._peak = np.zeros(4)
        """The running maximum of each log-wealth: Ville's inequality bounds it, so a crossing stands once made."""
        self._cap = np.array([bet_cap(loss) for loss in self.worst_losses()])

    def payoffs(self, x: float, y: float) -> np.ndarray:
        """The four bettors' payoffs on a pair, each of mean ≤ 0 under the null it tests: [a exceeds b by at most ε,
        b exceeds a by at most ε, a exceeds b by at least ε, b exceeds a by at least ε]."""
        gap = x - y
        return np.array([gap - self.epsilon, -gap - self.epsilon, self.epsilon - gap, self.epsilon + gap])

    def worst_losses(self) -> tuple[float, ...]:
        """How far below zero each payoff can fall for outcomes in [0, 1]."""
        return (1 + self.epsilon,) * 2 + (1 - self.epsilon,) * 2

    def update(self, x: float, y: float) -> None:
        """Settle every bet on one pair (x of group a, y of group b), then place the next."""
        if not (0 <= x <= 1 and 0 <= y <= 1):
            raise ValueError(BAD_OUTCOME.format(x=x, y=y))
        log_factor, self._bet, self._sum_z2 = _ons_step(self._bet, self._sum_z2, self.payoffs(x, y), self._cap)
        self._log_wealth += log_factor
        np.maximum(self._peak, self._log_wealth, out=self._peak)
        self.pairs += 1

    def get(self) -> tuple[float, float]:
        """Current log-wealth against H0⁺ (a exceeds b by more than ε) and against H0⁻ (b exceeds a by more than ε)."""
        above, below = self._log_wealth[:2]
        return float(above), float(below)

    def certification(self) -> float:
        """The evidence that the property holds: the smaller of the highest log-wealths its two bettors have reached."""
        return float(min(self._peak[2:]))

    def rejects(self, alpha: float) -> Literal["a>b", "b>a"] | None:
        """The side whose wealth has reached 2/α at some pair so far (the higher one if both have), else None.

        Each side is tested at α/2, so P(ever rejects | the property holds) ≤ α however often this is called (Ville's
        inequality bounds the running maximum, so a rejection stands once made); to cover several pairs of groups,
        pass each its share of α (see `fairstream.verdicts.budget`).
        """
        _check_alpha(alpha)
        above, below = self._peak[:2]
        if max(above, below) < math.log(2 / alpha):
            return None
        return "a>b" if above >= below else "b>a"

    def certifies(self, alpha: float) -> bool:
        """Whether both bettors on the property holding have reached 1/α at some pair so far: each one-sided null is
        then rejected at α, so P(ever certifies | the property is violated) ≤ α."""
        _check_alpha(alpha)
        return self.certification() >= math.log(1 / alpha)


class RatioBet(GapBet):
    """The same tests for the ratio of two rates against τ (disparate impact, the four-fifths rule at τ = 0.8): a
    violation is p_b < τ·p_a (or p_a < τ·p_b), bet on through τx − y, whose mean τ·p_a − p_b is ≤ 0 while the rule
    holds; a certification rejects both p_b ≤ τ·p_a and p_a ≤ τ·p_b.

    >>> bet = RatioBet(threshold=0.8)
    >>> for _ in range(40):
    ...     bet.update(1.0, 0.0)
    >>> bet.rejects(0.05), bet.certifies(0.05)
    ('a>b', False)
    """

    def __init__(self, threshold: float):
        if not 0 < threshold <= 1:
            raise ValueError(BAD_RATIO.format(threshold=threshold))
        self._start(threshold)

    def payoffs(self, x: float, y: float) -> np.ndarray:
        tau = self.epsilon
        return np.array([tau * x - y, tau * y - x, y - tau * x, x - tau * y])

    def worst_losses(self) -> tuple[float, ...]:
        return (1.0, 1.0, self.epsilon, self.epsilon)


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(BAD_ALPHA.format(alpha=alpha))


SLACK = 8
"""Outcomes a group may have waiting beyond one pair's worth before pairs take one more (or one fewer) of the larger
group: the ratio of the counts is rarely a whole number, and what it leaves over must neither pile up nor be lost."""


class RatioPairs:
    """Turns two unpaired streams of outcomes into pairs (x, y): each outcome of the group with fewer so far meets the
    mean of the next r outcomes of the other, r the ratio of the groups' counts so far, rounded (1 when they are
    even), one more while the larger group has more than `SLACK` outcomes left over and one fewer while the smaller
    one has. So every outcome is used, at most a few pairs late, and r depends on the counts alone.

    >>> pairs = RatioPairs()
    >>> [pairs.push(False, y) for y in (0.0, 1.0, 1.0, 0.0)], pairs.push(True, 0.5)
    ([[], [], [], []], [(0.5, 0.5)])
    """

    __slots__ = ("_waiting", "_counts")

    def __init__(self) -> None:
        self._waiting: tuple[deque[float], deque[float]] = (deque(), deque())
        self._counts = [0, 0]

    def push(self, group_is_a: bool, outcome: float) -> list[tuple[float, float]]:
        """The pairs this outcome completes: none while its group's outcomes wait for the other group's."""
        side = 0 if group_is_a else 1
        self._waiting[side].append(outcome)
        self._counts[side] += 1
        formed = []
        while self._waiting[0] and self._waiting[1]:
            few = 0 if self._counts[0] <= self._counts[1] else 1
            many = 1 - few
            r = max(1, round(self._counts[many] / self._counts[few]))
            if len(self._waiting[few]) > SLACK:
                r = max(1, r - 1)
            elif len(self._waiting[many]) >= r + SLACK:
                r += 1
            if len(self._waiting[many]) < r:
                break
            single = self._waiting[few].popleft()
            mean = sum(self._waiting[many].popleft() for _ in range(r)) / r
            formed.append((single, mean) if few == 0 else (mean, single))
        return formed
