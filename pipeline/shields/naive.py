"""The naive shield: flip a decision only when keeping it would push the fairness statistic out of the running target S.

It is the baseline of Ex. 3.2 of the energy-shield paper, for one stream (F_t = k/t, S ⊆ [0, 1]) and for demographic
parity between two groups (D_t = r_a − r_b, S ⊆ [−1, 1]). A kept decision moves the statistic weakly in one direction
(an acceptance raises F_t; an acceptance in group a or a rejection in group b raises D_t), and the shield flips it, with
probability 1, exactly when that move ends outside S on the side it moved to. It never flips a decision that moves the
statistic towards S, and it ignores flip costs.

Guarantee (derived here, checked exhaustively in the tests): once one step of the statistic is at most the width w of S
(F_t from t + 1 ≥ 1/w on; D_t once both groups have `min_count` members), a statistic inside S stays inside. For one
stream this gives an exact burn-in, `NaiveShield.burn_in`, after which F_t ∈ S on every run whatever the decision maker.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pipeline.shields.counters import Candidate, ParityCounts, Tally, check_decision
from pipeline.shields.errors import ShieldError
from pipeline.shields.verdict import Verdict

BAD_STREAM_TARGET = "running target S of one stream must satisfy 0 ≤ s_lo < s_hi ≤ 1; got {running}; S bounds an acceptance rate"
BAD_PARITY_TARGET = "running target S of a parity difference must satisfy −1 ≤ s_lo < s_hi ≤ 1; got {running}; e.g. (−κ, κ)"


def _verdict(proposed: int, kept: float, up: bool, running: tuple[float, float], cost: float, u: float, name: str) -> Verdict:
    """Flip exactly when the kept decision moves the statistic out of S on the side it moves to."""
    low, high = running
    if up and kept > high:
        return Verdict.draw(proposed, 1.0, u, cost, f"flipped: keeping would raise {name} to {kept:.4g}, above S = [{low}, {high}]")
    if not up and kept < low:
        return Verdict.draw(proposed, 1.0, u, cost, f"flipped: keeping would lower {name} to {kept:.4g}, below S = [{low}, {high}]")
    where = "inside" if low <= kept <= high else "towards"
    return Verdict.draw(proposed, 0.0, u, cost, f"kept: {name} moves to {kept:.4g}, {where} S = [{low}, {high}]")


def _min_steps(width: float) -> int:
    """The smallest n ≥ 0 with (n + 1)·width ≥ 1: from n on, one step of size 1/(n + 1) cannot jump over S."""
    n = 0
    while (n + 1) * width < 1:
        n += 1
    return n


@dataclass(frozen=True)
class NaiveShield:
    """Naive shield for one stream of decisions: keeps F_t = k/t inside `running` = S = [s_lo, s_hi].

    >>> shield = NaiveShield((0.4, 0.6))
    >>> shield.decide(1, Tally(10, 6), u=0.5)
    Verdict(decision=0, flipped=True, probability=1.0, cost=1.0, reason='flipped: keeping would raise F_t to 0.6364, above S = [0.4, 0.6]')
    >>> shield.burn_in
    4
    """

    running: tuple[float, float]

    def __post_init__(self) -> None:
        low, high = self.running
        if not 0 <= low < high <= 1:
            raise ShieldError(BAD_STREAM_TARGET.format(running=self.running))

    @property
    def start(self) -> Tally:
        """The tally before the first decision."""
        return Tally()

    def decide(self, decision: int, state: Tally, u: float) -> Verdict:
        """The verdict on `decision` after `state`; a flip costs 1."""
        up = check_decision(decision) == 1
        kept = (state.accepted + decision) / (state.decisions + 1)
        return _verdict(decision, kept, up, self.running, 1.0, u, "F_t")

    @cached_property
    def burn_in(self) -> int:
        """The smallest τ such that F_t ∈ S for every t ≥ τ on every run, found by following the set of reachable tallies.

        Once every reachable F_t is in S and t + 1 ≥ 1/w, one step cannot jump over S, so F_t stays in S for good.
        """
        low, high = self.running
        steady = _min_steps(high - low)
        reachable = np.array([True])  # reachable[k]: k acceptances possible after t decisions
        t, burn_in = 0, 1
        while True:
            ks = np.flatnonzero(reachable)
            up = (ks + 1) / (t + 1)
            down = ks / (t + 1)
            after_accept = np.where(up > high, ks, ks + 1)  # a proposed 1, flipped when it overshoots
            after_reject = np.where(down < low, ks + 1, ks)  # a proposed 0, flipped when it undershoots
            t += 1
            reachable = np.zeros(t + 1, dtype=bool)
            reachable[after_accept] = True
            reachable[after_reject] = True
            rates = np.flatnonzero(reachable) / t
            if np.any((rates < low) | (rates > high)):
                burn_in = t + 1
            elif t >= steady:
                return burn_in


@dataclass(frozen=True)
class NaiveParityShield:
    """Naive shield for demographic parity: keeps D_t = r_a − r_b inside `running` = S = [s_lo, s_hi], e.g. (−κ, κ).

    >>> shield = NaiveParityShield((-0.1, 0.1))
    >>> shield.decide(Candidate("b", 0, cost=0.3), ParityCounts(10, 6, 10, 5), u=0.5).reason
    'flipped: keeping would raise D_t to 0.1455, above S = [-0.1, 0.1]'
    >>> shield.min_count
    4
    """

    running: tuple[float, float]

    def __post_init__(self) -> None:
        low, high = self.running
        if not -1 <= low < high <= 1:
            raise ShieldError(BAD_PARITY_TARGET.format(running=self.running))

    @property
    def start(self) -> ParityCounts:
        """The counts before the first candidate."""
        return ParityCounts()

    def decide(self, candidate: Candidate, state: ParityCounts, u: float) -> Verdict:
        """The verdict on `candidate` after `state`; a flip is charged the candidate's cost."""
        kept = state.after(candidate.group, candidate.decision).difference
        up = (candidate.group == "a") == (candidate.decision == 1)
        return _verdict(candidate.decision, kept, up, self.running, candidate.cost, u, "D_t")

    @cached_property
    def min_count(self) -> int:
        """Members per group from which one arrival moves D_t by at most the width of S."""
        low, high = self.running
        return _min_steps(high - low)

    def settled(self, state: ParityCounts) -> bool:
        """Whether D_t stays in S from `state` on, on every run: both groups have `min_count` members and D_t ∈ S."""
        low, high = self.running
        return min(state.seen_a, state.seen_b) >= self.min_count and low <= state.difference <= high
