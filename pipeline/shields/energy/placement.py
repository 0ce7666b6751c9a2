"""Where a two-group shield's flips go: first to the smaller group, where one flip moves the gap most (pure).

The even rule flips an unfavoured decision of either group with probability ζ(D). Its push on the gap per decision is
ζ·(P_a + P_b), P_g the chance that a decision of group g is unfavoured (above the pivot a's acceptance and b's
rejection: p_a and 1 − p_b; below it 1 − p_a and p_b). A flip in a group of share s moves that group's rate by about
1/(s·t), so the push of a group's flips does not depend on its share, but their number does: the smaller group gets
the same push from fewer flips. Placed, the smaller group's unfavoured decisions are flipped with probability
c_small = min(1, ζ·(P_a + P_b)/P_small), and the larger group's with what the smaller cannot take even with all its
unfavoured decisions flipped: c_large = min(1, (ζ·(P_a + P_b) − P_small)/P_large) where that is positive, else 0. The push is the even rule's at every D, so the drift, and with it the point the gap settles
at, are unchanged; a bound synthesized for the placed rule simulates it. With equal shares, or without the raw rates,
the rule is the even one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Placement:
    """The smaller group (`first_smaller`: group a; None: equal shares, the even rule) and the raw rates p_a, p_b."""

    first_smaller: bool | None = None
    rates: tuple[float, float] | None = None

    @classmethod
    def of(cls, share: float, rates: tuple[float, float] | None) -> Placement:
        """The placement for group a's `share` of the decisions and the raw rates (None: unknown, the even rule)."""
        if rates is None or share == 0.5:
            return EVEN
        return cls(share < 0.5, (float(rates[0]), float(rates[1])))

    @property
    def even(self) -> bool:
        return self.first_smaller is None

    def chance(self, zeta: float, below: bool, first: bool, rates: tuple[float, float] | None = None) -> float:
        """The probability an unfavoured decision of group a (`first`) or b is flipped at energy ζ, the gap `below` the
        pivot or above it; `rates` overrides the placement's (an adaptive shield's estimates)."""
        if self.first_smaller is None:
            return zeta
        p_a, p_b = rates if rates is not None else self.rates  # type: ignore[misc]
        unfavoured_a, unfavoured_b = (1 - p_a, p_b) if below else (p_a, 1 - p_b)
        own, other = (unfavoured_a, unfavoured_b) if first else (unfavoured_b, unfavoured_a)
        return flip_chance(zeta, own, other, first == self.first_smaller)

    def chances(self, zeta: np.ndarray, below: np.ndarray, first: np.ndarray, p_a: np.ndarray | float | None = None, p_b: np.ndarray | float | None = None) -> np.ndarray:
        """`chance` for arrays of streams (`p_a`, `p_b`: per-stream rates overriding the placement's)."""
        if self.first_smaller is None:
            return zeta
        rate_a = self.rates[0] if p_a is None else p_a  # type: ignore[index]
        rate_b = self.rates[1] if p_b is None else p_b  # type: ignore[index]
        unfavoured_a = np.where(below, 1 - rate_a, rate_a)
        unfavoured_b = np.where(below, rate_b, 1 - rate_b)
        own, other = np.where(first, unfavoured_a, unfavoured_b), np.where(first, unfavoured_b, unfavoured_a)
        return flip_chances(zeta, own, other, first == self.first_smaller)


EVEN = Placement()
"""Every unfavoured decision flipped with probability ζ: equal shares, or the raw rates unknown."""


def flip_chance(zeta: float, own_unfavoured: float, other_unfavoured: float, own_smaller: bool) -> float:
    """The flip probability of an unfavoured decision of one group when the push ζ·(P_own + P_other) goes first to the
    smaller group's unfavoured decisions and the rest to the larger's."""
    push = zeta * (own_unfavoured + other_unfavoured)
    if own_smaller:
        return min(1.0, push / own_unfavoured) if own_unfavoured > 0 else 0.0
    rest = push - other_unfavoured  # what the smaller group cannot take with all its unfavoured decisions flipped
    return min(1.0, rest / own_unfavoured) if rest > 0 and own_unfavoured > 0 else 0.0


def flip_chances(zeta: np.ndarray, own_unfavoured: np.ndarray, other_unfavoured: np.ndarray, own_smaller: np.ndarray | bool) -> np.ndarray:
    """`flip_chance` for arrays of streams, with the same arithmetic."""
    push = zeta * (own_unfavoured + other_unfavoured)
    with np.errstate(divide="ignore", invalid="ignore"):
        as_small = np.where(own_unfavoured > 0, np.minimum(1.0, push / own_unfavoured), 0.0)
        rest = push - other_unfavoured
        as_large = np.where((rest > 0) & (own_unfavoured > 0), np.minimum(1.0, rest / own_unfavoured), 0.0)
    return np.where(own_smaller, as_small, as_large)


def placed(zeta: float, own_share: float, own_unfavoured: float, other_share: float, other_unfavoured: float) -> float:
    """The flip probability of an unfavoured decision of one group sharing the push with one other group, the smaller
    share's flips first (ζ itself at equal shares): the spread shield's two extreme groups."""
    if own_share == other_share:
        return zeta
    return flip_chance(zeta, own_unfavoured, other_unfavoured, own_share < other_share)


def placed_array(zeta: np.ndarray, own_share: np.ndarray, own_unfavoured: np.ndarray, other_share: np.ndarray, other_unfavoured: np.ndarray) -> np.ndarray:
    """`placed` for arrays of streams."""
    return np.where(own_share == other_share, zeta, flip_chances(zeta, own_unfavoured, other_unfavoured, own_share < other_share))
