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

from fairstream.lab.periodic.baseline import check_decision, check_groups, flip_verdict, is_first
from fairstream.shields.energy.shields import Counts, GroupCounts, Verdict
from fairstream.shields.errors import ShieldError

BAD_STREAM_TARGET = "running target S of one stream must satisfy 0 ≤ s_lo < s_hi ≤ 1; got {running}; S bounds an acceptance rate"
BAD_PARITY_TARGET = "running target S of a parity gap must satisfy −1 ≤ s_lo < s_hi ≤ 1; got {running}; e.g. (−κ, κ)"


def _flips(kept: float, up: bool, running: tuple[float, float]) -> bool:
    """Whether the kept decision moves the statistic out of S on the side it moves to."""
    low, high = running
    return (up and kept > high) or (not up and kept < low)


def _reason(flip: bool, kept: float, up: bool, running: tuple[float, float], name: str) -> str:
    low, high = running
    if flip:
        side = "raise {name} to {kept:.4g}, above" if up else "lower {name} to {kept:.4g}, below"
        return f"flipped: keeping would {side.format(name=name, kept=kept)} S = [{low}, {high}]"
    where = "inside" if low <= kept <= high else "towards"
    return f"kept: {name} moves to {kept:.4g}, {where} S = [{low}, {high}]"


def _min_steps(width: float) -> int:
    """The smallest n ≥ 0 with (n + 1)·width ≥ 1: from n on, one step of size 1/(n + 1) cannot jump over S."""
    n = 0
    while (n + 1) * width < 1:
        n += 1
    return n


@dataclass(frozen=True)
class NaiveShield:
    """Naive shield for one stream of decisions: keeps F_t = k/t inside `running` = S = [s_lo, s_hi].

    Before the first decision F_0 is taken to be the centre of S (the rule itself never looks at it); `violation` says
    whether F_t leaves S at or after `burn_in`, which the shield rules out.

    >>> shield = NaiveShield((0.4, 0.6))
    >>> verdict = shield.decide(1, Counts(10, 6), u=0.5)
    >>> verdict.shielded, verdict.reason
    (0, 'flipped: keeping would raise F_t to 0.6364, above S = [0.4, 0.6]')
    >>> shield.burn_in
    4
    """

    running: tuple[float, float]

    def __post_init__(self) -> None:
        low, high = self.running
        if not 0 <= low < high <= 1:
            raise ShieldError(BAD_STREAM_TARGET.format(running=self.running))

    def start(self) -> Counts:
        """The state before any decision."""
        return Counts()

    def decide(self, decision: int, state: Counts, u: float) -> Verdict:
        """Shield one proposed decision given the counts so far and the draw u."""
        up = check_decision(decision) == 1
        kept = (state.ones + decision) / (state.seen + 1)
        flip = _flips(kept, up, self.running)
        after = (state.ones + (1 - decision if flip else decision)) / (state.seen + 1)
        before = state.ones / state.seen if state.seen else sum(self.running) / 2
        violation = state.seen + 1 >= self.burn_in and not self.running[0] <= after <= self.running[1]
        return flip_verdict(decision, flip, u, before, after, violation, _reason(flip, kept, up, self.running, "F_t"))

    def next_state(self, state: Counts, verdict: Verdict) -> Counts:
        """The counts after the verdict's shielded decision."""
        return Counts(state.seen + 1, state.ones + verdict.shielded)

    @cached_property
    def burn_in(self) -> int:
        """The smallest τ such that F_t ∈ S for every t ≥ τ on every run, found by following the set of reachable counts.

        Once every reachable F_t is in S and t + 1 ≥ 1/w, one step cannot jump over S, so F_t stays in S for good.
        """
        low, high = self.running
        steady = _min_steps(high - low)
        reachable = np.array([True])  # reachable[k]: k shielded 1s possible after t decisions
        t, burn_in = 0, 1
        while True:
            ks = np.flatnonzero(reachable)
            after_one = np.where((ks + 1) / (t + 1) > high, ks, ks + 1)  # a proposed 1, flipped when it overshoots
            after_zero = np.where(ks / (t + 1) < low, ks + 1, ks)  # a proposed 0, flipped when it undershoots
            t += 1
            reachable = np.zeros(t + 1, dtype=bool)
            reachable[after_one] = True
            reachable[after_zero] = True
            rates = np.flatnonzero(reachable) / t
            if np.any((rates < low) | (rates > high)):
                burn_in = t + 1
            elif t >= steady:
                return burn_in


@dataclass(frozen=True)
class NaiveParityShield:
    """Naive shield for demographic parity: keeps D_t = r_a − r_b inside `running` = S = [s_lo, s_hi], e.g. (−κ, κ).

    `groups` names group a and group b. `violation` says whether D_t lies outside S after the decision: possible while
    a group is small, ruled out once the counts are `settled`.

    >>> shield = NaiveParityShield((-0.1, 0.1), groups=("men", "women"))
    >>> shield.decide(0, GroupCounts(10, 6, 10, 5), u=0.5, group="women").reason
    'flipped: keeping would raise D_t to 0.1455, above S = [-0.1, 0.1]'
    >>> shield.min_count
    4
    """

    running: tuple[float, float]
    groups: tuple[str, str] = ("a", "b")

    def __post_init__(self) -> None:
        low, high = self.running
        if not -1 <= low < high <= 1:
            raise ShieldError(BAD_PARITY_TARGET.format(running=self.running))
        check_groups(self.groups)

    def start(self) -> GroupCounts:
        """The state before any decision."""
        return GroupCounts()

    def decide(self, decision: int, state: GroupCounts, u: float, group: str) -> Verdict:
        """Shield one proposed decision for a member of `group` given the counts so far and the draw u."""
        first = is_first(self.groups, group)
        up = first == (check_decision(decision) == 1)
        kept = state.add(first, decision).gap
        flip = _flips(kept, up, self.running)
        after = state.add(first, 1 - decision if flip else decision).gap
        violation = not self.running[0] <= after <= self.running[1]
        reason = _reason(flip, kept, up, self.running, "D_t")
        return flip_verdict(decision, flip, u, state.gap, after, violation, reason, group)

    def next_state(self, state: GroupCounts, verdict: Verdict) -> GroupCounts:
        """The counts after the verdict's shielded decision in its group."""
        return state.add(is_first(self.groups, verdict.group), verdict.shielded)

    @cached_property
    def min_count(self) -> int:
        """Members per group from which one arrival moves D_t by at most the width of S."""
        low, high = self.running
        return _min_steps(high - low)

    def settled(self, state: GroupCounts) -> bool:
        """Whether D_t stays in S from `state` on, on every run: both groups have `min_count` members and D_t ∈ S."""
        low, high = self.running
        return min(state.seen_a, state.seen_b) >= self.min_count and low <= state.gap <= high
