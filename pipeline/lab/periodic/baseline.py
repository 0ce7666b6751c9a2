"""What the baseline shields (naive, FinHzn, periodic) share: checks of their inputs, the pair of groups, and the verdict
of a flip they make with probability 0 or 1.

They use the energy shields' `Counts`, `GroupCounts` and `Verdict`, so every shield reads and writes the same records.
"""

from __future__ import annotations

import math

from fairstream.shields.checks import BAD_DRAW, UNKNOWN_GROUP, check_decision, check_draw, check_groups, is_first
from fairstream.shields.energy.shields import GroupCounts, Verdict
from fairstream.shields.errors import ShieldError

__all__ = ["BAD_DRAW", "UNKNOWN_GROUP", "check_cost", "check_decision", "check_groups", "flip_verdict", "is_first", "merge", "total"]

BAD_COST = "a flip cost must be a finite number ≥ 0; got {cost!r}"


def check_cost(cost: object) -> float:
    """The cost when it is a finite number ≥ 0, else a `ShieldError`."""
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0:
        raise ShieldError(BAD_COST.format(cost=cost))
    return float(cost)


def total(counts: GroupCounts) -> int:
    """Members of both groups counted."""
    return counts.seen_a + counts.seen_b


def merge(first: GroupCounts, second: GroupCounts) -> GroupCounts:
    """The counts of both together."""
    return GroupCounts(
        seen_a=first.seen_a + second.seen_a,
        ones_a=first.ones_a + second.ones_a,
        seen_b=first.seen_b + second.seen_b,
        ones_b=first.ones_b + second.ones_b,
    )


def flip_verdict(
    decision: int, flip: bool, u: float, before: float, after: float, violation: bool, reason: str, group: str | None = None
) -> Verdict:
    """The verdict of a deterministic shield: flipped with probability 1 when `flip`, else 0, so u < probability ⇔ flip.

    >>> flip_verdict(1, True, 0.3, before=0.5, after=0.45, violation=False, reason="flipped").shielded
    0
    """
    check_draw(u)
    probability = 1.0 if flip else 0.0
    flipped = u < probability
    shielded = 1 - decision if flipped else decision
    return Verdict(
        decision=decision,
        shielded=shielded,
        flipped=flipped,
        probability=probability,
        before=before,
        after=after,
        violation=violation,
        why=reason,
        group=group,
    )
