"""Checks of a shield's inputs that every shield shares: the decision, the random draw, and the pair of groups."""

from __future__ import annotations

from fairstream.shields.errors import ShieldError

BAD_DECISION = "decision must be 0 or 1; got {decision!r}; pass the proposed binary decision"
BAD_DRAW = "u must lie in [0, 1); got {u!r}; derive it with uniform(seed, decision_id)"
UNKNOWN_GROUP = "unknown group {group!r}; known groups: {known}"
SAME_GROUPS = "the two groups must differ; got {groups}; name the pair as (group a, group b)"


def check_decision(decision: object) -> int:
    """The decision when it is 0 or 1, else a `ShieldError`."""
    if isinstance(decision, bool | float) or decision not in (0, 1):
        raise ShieldError(BAD_DECISION.format(decision=decision))
    return int(decision)  # type: ignore[call-overload]


def check_draw(u: float) -> float:
    """The draw when it lies in [0, 1), else a `ShieldError`."""
    if not 0 <= u < 1:
        raise ShieldError(BAD_DRAW.format(u=u))
    return u


def check_groups(groups: tuple[str, str]) -> None:
    """A `ShieldError` unless `groups` names two different groups."""
    if len(groups) != 2 or groups[0] == groups[1]:
        raise ShieldError(SAME_GROUPS.format(groups=groups))


def is_first(groups: tuple[str, str], group: str) -> bool:
    """Whether `group` is group a (the first of the pair) rather than group b."""
    if group not in groups:
        raise ShieldError(UNKNOWN_GROUP.format(group=group, known=", ".join(groups)))
    return group == groups[0]
