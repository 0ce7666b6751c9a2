"""The states of two groups' counts after t decisions, (seen_a, ones_a, ones_b), in one rank order: the layout the
exact group violations and the fixed-horizon shields' tables share (pure)."""

from __future__ import annotations

import numpy as np


def offset(t: int, seen_a):
    """Index of the first state with `seen_a` members of group a in layer t: Σ_{m < seen_a} (m + 1)(t − m + 1)."""
    n = seen_a
    return (t + 2) * n * (n + 1) // 2 - n * (n + 1) * (2 * n + 1) // 6


def rank(t: int, seen_a, ones_a, ones_b):
    """Index of the counts (seen_a, ones_a, ones_b) within layer t; works on ints and on numpy arrays."""
    return offset(t, seen_a) + ones_a * (t - seen_a + 1) + ones_b


def layer(t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (seen_a, ones_a, ones_b) after t candidates, in rank order."""
    seen = np.arange(t + 1)
    sizes = (seen + 1) * (t - seen + 1)
    seen_a = np.repeat(seen, sizes)
    within = np.arange(sizes.sum()) - np.repeat(offset(t, seen), sizes)
    width = t - seen_a + 1
    return seen_a, within // width, within % width
