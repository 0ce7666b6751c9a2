"""The counters the baseline shields decide on: one stream's decisions and acceptances (`Tally`), two groups' candidates
and acceptances (`ParityCounts`), and one incoming candidate (`Candidate`).

The two groups of a demographic-parity shield are called `a` and `b`; the caller maps its protected pair onto them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipeline.errors import InsufficientData
from pipeline.shields.errors import ShieldError

GROUPS = ("a", "b")

UNKNOWN_GROUP = "unknown group {group!r}; the parity shields know groups 'a' and 'b'; hint: map the protected pair onto them"
BAD_DECISION = "a decision must be 0 (reject) or 1 (accept); got {decision!r}"
BAD_COST = "a flip cost must be a finite number ≥ 0; got {cost!r}"
BAD_COUNTS = "counts must be integers with 0 ≤ accepted ≤ seen; got {counts}"
NO_DECISIONS = "the acceptance rate of an empty tally is undefined; got 0 decisions"


def check_decision(decision: int) -> int:
    """The decision itself when it is 0 or 1, else a `ShieldError`."""
    if decision not in (0, 1) or isinstance(decision, bool | float):
        raise ShieldError(BAD_DECISION.format(decision=decision))
    return int(decision)


def group_index(group: str) -> int:
    """0 for group `a`, 1 for group `b`."""
    if group not in GROUPS:
        raise ShieldError(UNKNOWN_GROUP.format(group=group))
    return GROUPS.index(group)


@dataclass(frozen=True)
class Tally:
    """One stream of shielded decisions: `decisions` made so far (t) and how many were acceptances (k); F_t = k/t.

    >>> Tally().after(1).after(0).after(1).rate
    0.6666666666666666
    """

    decisions: int = 0
    accepted: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.accepted <= self.decisions:
            raise ShieldError(BAD_COUNTS.format(counts=self))

    def after(self, decision: int) -> Tally:
        """The tally once `decision` is made."""
        return Tally(self.decisions + 1, self.accepted + check_decision(decision))

    @property
    def rate(self) -> float:
        """F_t = k/t; undefined before the first decision."""
        if self.decisions == 0:
            raise InsufficientData(NO_DECISIONS)
        return self.accepted / self.decisions


@dataclass(frozen=True)
class ParityCounts:
    """Candidates seen and accepted in groups a and b; the demographic-parity difference is r_a − r_b.

    An empty group's acceptance rate counts as 0, as in the fairness-shield code and the two-group energy shield, so the
    gap is defined on every prefix and a horizon reached with one group empty must still have the other's rate ≤ κ.

    >>> counts = ParityCounts().after("a", 1).after("a", 0).after("b", 0)
    >>> counts, counts.difference, counts.total
    (ParityCounts(seen_a=2, accepted_a=1, seen_b=1, accepted_b=0), 0.5, 3)
    """

    seen_a: int = 0
    accepted_a: int = 0
    seen_b: int = 0
    accepted_b: int = 0

    def __post_init__(self) -> None:
        if not (0 <= self.accepted_a <= self.seen_a and 0 <= self.accepted_b <= self.seen_b):
            raise ShieldError(BAD_COUNTS.format(counts=self))

    def after(self, group: str, decision: int) -> ParityCounts:
        """The counts once a candidate of `group` gets `decision`."""
        accepted = check_decision(decision)
        if group_index(group) == 0:
            return ParityCounts(self.seen_a + 1, self.accepted_a + accepted, self.seen_b, self.accepted_b)
        return ParityCounts(self.seen_a, self.accepted_a, self.seen_b + 1, self.accepted_b + accepted)

    def __add__(self, other: ParityCounts) -> ParityCounts:
        return ParityCounts(
            self.seen_a + other.seen_a, self.accepted_a + other.accepted_a, self.seen_b + other.seen_b, self.accepted_b + other.accepted_b
        )

    @property
    def total(self) -> int:
        """Candidates seen in both groups."""
        return self.seen_a + self.seen_b

    def seen(self, group: str) -> int:
        """Candidates seen in `group`."""
        return (self.seen_a, self.seen_b)[group_index(group)]

    def rate(self, group: str) -> float:
        """Acceptance rate of `group` (0 while the group is empty)."""
        seen, accepted = ((self.seen_a, self.accepted_a), (self.seen_b, self.accepted_b))[group_index(group)]
        return accepted / seen if seen else 0.0

    @property
    def difference(self) -> float:
        """r_a − r_b, in [−1, 1]."""
        return self.rate("a") - self.rate("b")

    @property
    def gap(self) -> float:
        """φ = |r_a − r_b|, the demographic-parity gap."""
        return abs(self.difference)


@dataclass(frozen=True)
class Candidate:
    """One decision proposed for a member of `group`: the proposed `decision` and the `cost` of flipping it.

    >>> Candidate("b", 1, cost=0.2)
    Candidate(group='b', decision=1, cost=0.2)
    """

    group: str
    decision: int
    cost: float = 1.0

    def __post_init__(self) -> None:
        group_index(self.group)
        check_decision(self.decision)
        if isinstance(self.cost, bool) or not isinstance(self.cost, int | float) or not math.isfinite(self.cost) or self.cost < 0:
            raise ShieldError(BAD_COST.format(cost=self.cost))
