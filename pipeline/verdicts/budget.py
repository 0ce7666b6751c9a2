"""One error budget per monitor: how α (or a constraint's δ) is split over the parts, pairs and groups it tests (pure).

A family of statements is declared up front where the spec names it (equalized odds has two parts; a group list
of k groups gives k(k−1)/2 pairs): each member gets an equal share. Where it is not (`groups: all`, the strata of
conditional statistical parity), the j-th member to be tested gets total·6/(π²j²), which sums to the total over any
number of members, so the family never loosens as groups appear. A member keeps the share it was first tested at.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Literal

Family = Literal["monitor", "part"]

SCHEDULE = 6 / math.pi**2
"""Σ_j 6/(π²j²) = 1: the share of the first undeclared member; the j-th gets SCHEDULE/j²."""


@dataclass
class Budget:
    """Shares of `total` for the members of one family, fixed when each is first asked for.

    >>> declared = Budget(0.05, size=2)
    >>> declared.share("tpr"), declared.share("fpr")
    (0.025, 0.025)
    >>> open_ended = Budget(0.05)
    >>> [round(open_ended.share(pair), 5) for pair in ("a-b", "a-c", "a-b")]
    [0.0304, 0.0076, 0.0304]
    """

    total: float
    size: int | None = None
    """How many members the family has when the spec declares them; None: the schedule 6/(π²j²)."""
    shares: dict[Hashable, float] = field(default_factory=dict)

    def share(self, member: Hashable) -> float:
        level = self.shares.get(member)
        if level is None:
            if self.size:
                level = self.total / self.size
            else:
                level = self.total * SCHEDULE / (len(self.shares) + 1) ** 2
            self.shares[member] = level
        return level


@dataclass
class MonitorBudget:
    """α over a monitor's parts (equal shares, or each part the whole α with `family: part`), and each part's share over
    its pairs of groups; the standardized part of conditional statistical parity is a point verdict and takes none."""

    alpha: float
    family: Family = "monitor"
    parts: int | None = None
    """Parts known up front (equalized odds: 2); None where they come from the data (strata)."""
    pairs: int | None = None
    """Pairs per part known up front (a group list, or listed pairs); None with `groups: all`."""
    part_budget: Budget = field(init=False)
    pair_budgets: dict[str, Budget] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.part_budget = Budget(self.alpha, 1 if self.family == "part" else self.parts)

    def part_alpha(self, part: str) -> float:
        return self.part_budget.share(part)  # with `family: part` the budget has one member's size: each part gets α

    def pair_alpha(self, part: str, pair: tuple[str, str]) -> float:
        """The level pair (a, b) of `part` is tested at, whichever group is the higher."""
        budget = self.pair_budgets.get(part)
        if budget is None:
            budget = self.pair_budgets[part] = Budget(self.part_alpha(part), self.pairs)
        return budget.share(tuple(sorted(pair)))


def declared_pairs(groups: list[str] | None, pairs: list[tuple[str, str]] | None) -> int | None:
    """How many pairs a part compares when the spec says so: its listed pairs, or every pair of its listed groups."""
    if pairs:
        return len({tuple(sorted(pair)) for pair in pairs})
    if groups:
        return math.comb(len(set(groups)), 2)
    return None
