"""Anytime-valid test that two groups' rates differ by more than ε, by betting (Waudby-Smith & Ramdas; Chugg et al. 2023).

The k-th outcome x_k of group a meets the k-th outcome y_k of group b. A bettor starts with wealth 1 and stakes a
fraction λ_k, fixed before pair k arrives, on x_k − y_k exceeding ε: K_n = Π (1 + λ_k (x_k − y_k − ε)). If
E[x − y] ≤ ε (H0⁺), K is a nonnegative supermartingale and, by Ville's inequality, P(∃n: K_n ≥ 1/α) ≤ α: the test
may be read after every pair, forever, without inflating false alarms. A mirror bettor tests H0⁻: E[y − x] ≤ ε.

Why pairing by rank keeps pairs i.i.d.: `PairQueue` decides which a-outcome meets which b-outcome from the order
in which outcomes are handed to it within each group alone, never from the values. The monitor hands them over in
the order their trials *opened* (see `fairstream.estimators.opening`), which an outcome decided later cannot change;
so if each group's outcomes are i.i.d., the k-th outcome of a group is a fresh draw whatever k is, independent of the
other group and of every earlier pair, and the pairs are i.i.d. with E[x − y] equal to p_a − p_b, which is all the
supermartingale argument needs, however late and in whatever order the labels arrive. The group that runs ahead
waits in a FIFO.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal

import numpy as np

ONS_GAIN = 2 / (2 - math.log(3))
"""Step size c of the online Newton step bets (Cutkosky & Orabona), as in Chugg et al."""
BET_CAP = 0.5
"""Largest bet λ: every factor 1 + λ·(x − y − ε) stays ≥ (1 − ε)/2 > 0 for outcomes in [0, 1] and ε < 1."""

BAD_EPSILON = "epsilon must lie in [0, 1); got {epsilon}; the gap of two rates lies in [-1, 1]"
BAD_OUTCOME = "outcomes must lie in [0, 1]; got x = {x}, y = {y}; pass 0/1 indicators or rescale bounded outcomes"
BAD_ALPHA = "alpha must lie in (0, 1); got {alpha}; pass the false-alarm rate, e.g. 0.05"


def _ons_step(bet, sum_z2, payoff):
    """Log-factor of `payoff` = x − y − ε at the current bet, and the next bet by online Newton step (floats or arrays)."""
    factor = 1 + bet * payoff
    z = payoff / factor
    sum_z2 = sum_z2 + z * z
    return np.log(factor), np.minimum(np.maximum(bet + ONS_GAIN * z / sum_z2, 0.0), BET_CAP), sum_z2


def log_wealth_paths(payoffs: np.ndarray) -> np.ndarray:
    """Log-wealth after each payoff x_k − y_k − ε of online-Newton-step bettors: time on the last axis, one
    independent bettor per index of the leading axes. `GapBet` makes the same bets one pair at a time.

    >>> log_wealth_paths(np.array([0.5, 0.5, -0.5])).round(4)
    array([ 0.    ,  0.2231, -0.0645])
    """
    payoffs = np.asarray(payoffs, dtype=float)
    bet, sum_z2, log_wealth = np.zeros(payoffs.shape[:-1]), np.ones(payoffs.shape[:-1]), np.zeros(payoffs.shape[:-1])
    paths = np.empty_like(payoffs)
    for k in range(payoffs.shape[-1]):
        log_factor, bet, sum_z2 = _ons_step(bet, sum_z2, payoffs[..., k])
        log_wealth = log_wealth + log_factor
        paths[..., k] = log_wealth
    return paths


class GapBet:
    """Sequential test of |p_a − p_b| ≤ ε for one ordered pair of groups: one bettor per side, fed paired outcomes.

    >>> bet = GapBet(epsilon=0.1)
    >>> for _ in range(30):
    ...     bet.update(1.0, 0.0)
    >>> bet.pairs, bet.rejects(0.05)
    (30, 'a>b')
    """

    __slots__ = ("epsilon", "pairs", "_bet", "_sum_z2", "_log_wealth", "_rejected")

    def __init__(self, epsilon: float):
        if not 0 <= epsilon < 1:
            raise ValueError(BAD_EPSILON.format(epsilon=epsilon))
        self.epsilon = epsilon
        self.pairs = 0
        self._bet = np.zeros(2)  # [H0⁺: E[x − y] ≤ ε, H0⁻: E[y − x] ≤ ε]
        self._sum_z2 = np.ones(2)
        self._log_wealth = np.zeros(2)
        self._rejected: Literal["a>b", "b>a"] | None = None

    def update(self, x: float, y: float) -> None:
        """Settle both bets on the k-th outcome x of group a and the k-th outcome y of group b, then place the next."""
        if not (0 <= x <= 1 and 0 <= y <= 1):
            raise ValueError(BAD_OUTCOME.format(x=x, y=y))
        payoffs = np.array([x - y - self.epsilon, y - x - self.epsilon])
        log_factor, self._bet, self._sum_z2 = _ons_step(self._bet, self._sum_z2, payoffs)
        self._log_wealth += log_factor
        self.pairs += 1

    def get(self) -> tuple[float, float]:
        """Current log-wealth against H0⁺ (a exceeds b by more than ε) and against H0⁻ (b exceeds a by more than ε)."""
        above, below = self._log_wealth
        return float(above), float(below)

    def rejects(self, alpha: float) -> Literal["a>b", "b>a"] | None:
        """The side whose wealth has reached 2/α, now or at an earlier call, else None.

        Each side is tested at α/2, so P(ever rejects | |p_a − p_b| ≤ ε) ≤ α however often this is called (Ville's
        inequality bounds the running maximum, so a rejection stands once made); to cover several pairs of groups,
        pass each its share of α (see `fairstream.verdicts.budget`).
        """
        if not 0 < alpha < 1:
            raise ValueError(BAD_ALPHA.format(alpha=alpha))
        if self._rejected is None:
            above, below = self.get()
            if max(above, below) >= math.log(2 / alpha):
                self._rejected = "a>b" if above >= below else "b>a"
        return self._rejected


class PairQueue:
    """Turns two unpaired streams of outcomes into pairs (x, y): the k-th outcome of a with the k-th of b.

    >>> queue = PairQueue()
    >>> queue.push(True, 1.0), queue.push(True, 0.0), queue.push(False, 0.5), queue.push(False, 1.0)
    ([], [], [(1.0, 0.5)], [(0.0, 1.0)])
    """

    __slots__ = ("_waiting", "_waiting_are_a")

    def __init__(self) -> None:
        self._waiting: deque[float] = deque()
        self._waiting_are_a = True

    def push(self, group_is_a: bool, outcome: float) -> list[tuple[float, float]]:
        """The pairs this outcome completes: none while its group is ahead, else one with the oldest waiting outcome."""
        if not self._waiting or self._waiting_are_a == group_is_a:
            self._waiting.append(outcome)
            self._waiting_are_a = group_is_a
            return []
        partner = self._waiting.popleft()
        return [(outcome, partner) if group_is_a else (partner, outcome)]
