"""One bettor on every pair of groups at once: a round at a time, each group's waiting outcomes averaged, the pairs'
violation payoffs weighed by how far each has run beyond its threshold so far, and one stake on their weighed average
(pure).

A round takes from each group in the pool the mean of its next r outcomes, r its count over the smallest group's
(rounded; one more while it has `SLACK` left over, one fewer while the smallest groups have). Which outcomes meet
depends on the order and counts of arrivals, never on the values, as `fairstream.estimators.pairing.RatioPairs` pairs
two groups. Every pair's violation payoffs (a·x + b·y + c for a ahead of b, and for b ahead of a) then have mean at
most 0 under its null, and so does any average of them with weights fixed before the round: the wealth
W = Π (1 + λ·Σ v·payoff) is a test supermartingale for "every pair within its threshold", whatever the dependence
between pairs that share a group. When many pairs drift together the average's noise shrinks and W grows far faster
than any one pair's test (Bharti, Pal & Sulam, arXiv 2602.21479); when one drifts, the weights find it.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from fairstream.estimators.betting import bet_cap, ons_step
from fairstream.estimators.pairing import SLACK

OPTIMISM = 0.5
"""A pair side's weight is its mean payoff so far plus OPTIMISM/√rounds (at least 0): early rounds spread the stake."""


class PooledBet:
    """The pooled test of one part (see the module): pairs join as their groups appear."""

    __slots__ = ("_groups", "_waiting", "_counts", "_pairs", "_rows", "_sums", "_rounds", "_bet", "_sum_z2", "_cap", "log_wealth", "peak", "rounds")

    def __init__(self) -> None:
        self._groups: list[str] = []
        self._waiting: dict[str, deque[float]] = {}
        self._counts: dict[str, int] = {}
        self._pairs: list[tuple[str, str]] = []
        self._rows = np.zeros((0, 3))
        """Per pair two rows (a, b, c): the payoffs a·x + b·y + c of its violation bettors."""
        self._sums = np.zeros(0)
        self._rounds = np.zeros(0)
        """Per pair side, the sum of its payoffs and the rounds it has taken part in."""
        self._bet, self._sum_z2, self._cap = 0.0, 1.0, bet_cap(1.0)
        self.log_wealth = self.peak = 0.0
        self.rounds = 0

    def add_pair(self, pair: tuple[str, str], rows: np.ndarray) -> None:
        """Test `pair` (a, b) from the next round on, with its violation bettors' payoff rows."""
        joined = [group for group in pair if group not in self._waiting]
        for group in joined:
            self._groups.append(group)
            self._waiting[group] = deque()
        if joined:  # the ratios start afresh from what waits now, so a late group does not hold the others' rounds up
            self._counts = {name: len(queue) for name, queue in self._waiting.items()}
        self._pairs.append(pair)
        self._rows = np.vstack([self._rows, rows])
        lowest = np.minimum(rows[:, 0], 0) + np.minimum(rows[:, 1], 0) + rows[:, 2]
        self._cap = min(self._cap, bet_cap(float(-lowest.min())))
        self._sums = np.concatenate([self._sums, np.zeros(2)])
        self._rounds = np.concatenate([self._rounds, np.zeros(2)])

    def push(self, group: str, outcome: float) -> bool:
        """One outcome of `group` (ignored unless a pair holds it); whether it completed a round."""
        waiting = self._waiting.get(group)
        if waiting is None:
            return False
        waiting.append(outcome)
        self._counts[group] += 1
        takes = self._takes()
        if takes is None:
            return False
        values = {name: math.fsum(self._waiting[name].popleft() for _ in range(take)) / take for name, take in takes.items()}
        firsts = np.array([values[a] for a, _ in self._pairs for _side in (0, 1)])
        seconds = np.array([values[b] for _, b in self._pairs for _side in (0, 1)])
        payoffs = self._rows[:, 0] * firsts + self._rows[:, 1] * seconds + self._rows[:, 2]
        weights = self._weights()
        log_factor, self._bet, self._sum_z2 = ons_step(self._bet, self._sum_z2, float(weights @ payoffs), self._cap)
        self.log_wealth += float(log_factor)
        self.peak = max(self.peak, self.log_wealth)
        self._sums += payoffs
        self._rounds += 1
        self.rounds += 1
        return True

    @property
    def waiting(self) -> dict[str, int]:
        """Outcomes each group has waiting for a round."""
        return {name: len(queue) for name, queue in self._waiting.items()}

    def _takes(self) -> dict[str, int] | None:
        """How many outcomes each group gives the next round, or None while some group has too few waiting."""
        fewest = min(self._counts.values())
        if fewest == 0:
            return None
        takes = {name: max(1, round(self._counts[name] / fewest)) for name in self._groups}
        behind = any(take == 1 and len(self._waiting[name]) > SLACK for name, take in takes.items())
        for name, take in takes.items():
            if len(self._waiting[name]) >= take + SLACK:
                take += 1
            elif behind and take > 1:  # the smallest groups pile up: the larger ones give one fewer
                take -= 1
            if len(self._waiting[name]) < take:
                return None
            takes[name] = take
        return takes

    def _weights(self) -> np.ndarray:
        """Weights summing to 1, fixed before the round: each side's mean payoff so far, made optimistic, at least 0."""
        seen = np.maximum(self._rounds, 1)
        score = np.maximum(self._sums / seen + OPTIMISM / np.sqrt(seen), 0.0)
        total = score.sum()
        return score / total if total > 0 else np.full(len(score), 1 / len(score))

    def leaders(self) -> list[tuple[tuple[str, str], float]]:
        """The pairs the next stake leans on, with their share of it: the fewest that make up half, largest first."""
        weights = self._weights() if len(self._pairs) else np.zeros(0)
        per_pair = weights.reshape(-1, 2).sum(axis=1) if len(weights) else weights
        named, carried = [], 0.0
        for index in np.argsort(-per_pair, kind="stable"):
            if carried >= 0.5:
                break
            named.append((self._pairs[index], float(per_pair[index])))
            carried += float(per_pair[index])
        return named
