"""The gap of a rate across groups: max − min over the groups, naming the pair that attains it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gap:
    """`difference` = estimate of `high` − estimate of `low`; `ratio` = low / high (1 when both are 0)."""

    difference: float
    high: str
    low: str
    ratio: float


def between_groups(estimates: dict[str, float]) -> Gap | None:
    """The largest difference between any two groups (every pair is covered by max − min); None below two groups.

    Ties go to the group whose name sorts first, so the named pair is deterministic.

    >>> between_groups({"a": 0.2, "b": 0.5, "c": 0.4})
    Gap(difference=0.3, high='b', low='a', ratio=0.4)
    """
    if len(estimates) < 2:
        return None
    ordered = sorted(estimates)
    high = max(ordered, key=lambda group: estimates[group])
    low = min(ordered, key=lambda group: estimates[group])
    top, bottom = estimates[high], estimates[low]
    return Gap(top - bottom, high, low, bottom / top if top > 0 else 1.0)
