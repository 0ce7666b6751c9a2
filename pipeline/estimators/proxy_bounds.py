"""Bounds on each group's rate that need only a calibrated proxy: what the data cannot rule out when the outcome may
depend on the proxy inputs in any way (partial identification, as Kallus, Mao & Zhou, Management Science 2022) (pure).

Trials are binned by their most likely group and how likely it is. Calibration makes P(group g | bin) the bin's mean
probability p̄_g; how the group is coupled with the outcome inside a bin is unknown, so the bin's share of trials that
are hits and in group g lies between Fréchet's bounds max(0, f + p̄_g − 1) and min(f, p̄_g), f the bin's hit share.
The rate θ = N / (N + Q), N the hits and Q the misses in the rate's set, rises with N and falls with Q: its bounds are
N's lower over N's lower plus Q's upper, and the other way round. Each sum is moved outward by a normal margin at
level 1 − α/4 (conservative: the variance of a hit plus a probability is at most twice the sum of their variances).
"""

from __future__ import annotations

import math

import numpy as np

from fairstream.estimators.means import normal_width
from fairstream.estimators.proxy import ProxyLayout


def _frechet(count: np.ndarray, share: np.ndarray, likely: np.ndarray, z: float) -> tuple[float, float]:
    """The sums over bins of the lower and upper Fréchet bounds on trials that are both in the group and in the event
    (share `share` of each bin), moved outward by the margin."""
    lower = np.maximum(0.0, share + likely - 1)
    upper = np.minimum(share, likely)
    spread = 2 * (share * (1 - share) + likely * (1 - likely))
    low_margin = z * math.sqrt(float(np.sum(count * spread * (lower > 0))))
    high_margin = z * math.sqrt(float(np.sum(count * spread * (upper < likely))))
    return max(0.0, float(np.sum(count * lower)) - low_margin), float(np.sum(count * upper)) + high_margin


def proxy_bounds(layout: ProxyLayout, numbers: np.ndarray, alpha: float) -> dict[str, tuple[float, float]]:
    """Each group's rate bounds at level 1 − α from the bin sums of a proxy cell; a group no bin can hold is omitted."""
    k = len(layout.groups)
    bins = numbers[layout.sections["bins"]].reshape(-1, k + 3)
    count = bins[:, 0]
    seen = count > 0
    count, likely, hits, members = count[seen], bins[seen, 1 : 1 + k] / count[seen, None], bins[seen, -2], bins[seen, -1]
    hit_share, miss_share = hits / count, (members - hits) / count
    z = normal_width(alpha / 2)  # four one-sided ends at α/4 each
    out: dict[str, tuple[float, float]] = {}
    for index, group in enumerate(layout.groups):
        hits_low, hits_high = _frechet(count, hit_share, likely[:, index], z)
        misses_low, misses_high = _frechet(count, miss_share, likely[:, index], z)
        if hits_high + misses_low <= 0:
            continue
        low = hits_low / (hits_low + misses_high) if hits_low + misses_high > 0 else 0.0
        out[group] = (low, min(1.0, hits_high / (hits_high + misses_low)))
    return out
