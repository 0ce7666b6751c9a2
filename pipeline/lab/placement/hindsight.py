"""The hindsight oracle: the fewest decisions flipped, knowing the whole stream, that bring the groups' rates within a
given spread at its end (pure).

A group of n decisions, k accepted, can end at any rate j/n, at the cost of |j − k| flips. Bringing every rate into one
interval [L, L + s] costs, per group, the flips to the nearest j/n inside it (none fits: that L is out). The least
cost is at an L where an interval end meets some group's j/n, so every such L is tried. Two groups with their gap
brought to s are the case k = 2: the flips go to the smaller group while that is cheaper.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SLACK = 1e-9
"""Rounding room when a rate lies on an interval's end."""


def fewest_flips(seen: Sequence[int], ones: Sequence[int], spread: float) -> int:
    """The fewest flips of raw decisions (`ones` accepted of `seen`, per group) after which max − min of the groups'
    rates is at most `spread`; groups without decisions are left out."""
    groups = [(n, k) for n, k in zip(seen, ones) if n > 0]
    if len(groups) < 2:
        return 0
    ends = np.concatenate([np.arange(n + 1) / n for n, _ in groups])
    starts = np.unique(np.concatenate([ends, ends - spread]))
    starts = starts[(starts >= -SLACK - spread) & (starts <= 1 + SLACK)]
    total = np.zeros(len(starts))
    feasible = np.ones(len(starts), dtype=bool)
    for n, k in groups:
        low = np.ceil(n * starts - SLACK)
        high = np.floor(n * (starts + spread) + SLACK)
        low, high = np.maximum(low, 0), np.minimum(high, n)
        feasible &= low <= high
        total += np.maximum(low - k, 0) + np.maximum(k - high, 0)
    return int(total[feasible].min())
