"""The known-parameter oracle a change detector is measured against: a CUSUM on the same pairs that knows the gap
before and after the move and the pairs' spread, its threshold set so that 1 % of streams that hold still raise an
alarm within 10,000 decisions (lab).

Beside it, the bound of any detector that does not know the gap before: one that knows the move's size, direction and
the spread, and compares the pairs since each start with those before it, its threshold set the same way. What it
cannot find, no detector that holds its false alarms whatever the gap before finds at that level.

Its null streams are drawn here, not through the monitor's pairing: a pair is one outcome of the smaller group against
the mean of r = majority/minority outcomes of the larger, both groups at `BASE`.
"""

from __future__ import annotations

import numpy as np

from fairstream.estimators.change import BEFORE, LOOKBACKS
from fairstream.lab.changes.streams import BASE

FALSE_ALARMS = 0.01
HORIZON = 10_000
"""Decisions within which `FALSE_ALARMS` of the oracle's streams that hold still raise an alarm."""


def spread(share: float) -> float:
    """The variance of one pair's difference while both groups approve at `BASE`."""
    minority = min(share, 1 - share)
    return BASE * (1 - BASE) * (1 + minority / (1 - minority))


def null_pairs(streams: int, share: float, rng: np.random.Generator, decisions: int = HORIZON) -> np.ndarray:
    """`streams` × pairs differences of streams that hold still, as many pairs as `decisions` give."""
    minority = min(share, 1 - share)
    ratio = max(1, round((1 - minority) / minority))
    pairs = int(decisions * minority)
    single = rng.random((streams, pairs)) < BASE
    mean = rng.binomial(ratio, BASE, (streams, pairs)) / ratio
    return single - mean


def cusum(zs: np.ndarray, gap: float, variance: float) -> np.ndarray:
    """The CUSUM of the log-likelihood ratios of mean `gap` against mean 0 (Gaussian, known `variance`), along the
    last axis."""
    steps = gap / variance * (zs - gap / 2)
    out = np.empty_like(steps)
    running = np.zeros(steps.shape[:-1])
    for index in range(steps.shape[-1]):
        running = np.maximum(running + steps[..., index], 0.0)
        out[..., index] = running
    return out


def invariant(zs: np.ndarray, gap: float, variance: float) -> np.ndarray:
    """Along the last axis, the largest over the starts of the detector's grid of the log-likelihood ratio of the pairs
    since the start moved by `gap` from those before it (Gaussian, known `variance`): the contrast D of the two means,
    with v = variance · (1/n₁ + 1/n₂), gives (gap · D − gap²/2) / v, whatever the gap before."""
    sums = np.concatenate([np.zeros(zs.shape[:-1] + (1,)), np.cumsum(zs, axis=-1)], axis=-1)
    seen = np.arange(1, zs.shape[-1] + 1)
    best = np.full(zs.shape, -np.inf)
    for after in LOOKBACKS[LOOKBACKS <= zs.shape[-1] - BEFORE].astype(np.intp):
        now, before = seen[after + BEFORE - 1 :], seen[after + BEFORE - 1 :] - after
        after_sums = sums[..., now] - sums[..., before]
        contrast = after_sums / after - sums[..., before] / before
        ratio = (gap * contrast - gap * gap / 2) / (variance * (1 / before + 1 / after))
        np.maximum(best[..., after + BEFORE - 1 :], ratio, out=best[..., after + BEFORE - 1 :])
    return best


def threshold(share: float, gap: float, streams: int = 2000, seed: int = 0, *, statistic=cusum) -> float:
    """The threshold of `statistic` (the oracle's, or `invariant`): `FALSE_ALARMS` of `streams` null streams cross it
    within `HORIZON` decisions."""
    zs = null_pairs(streams, share, np.random.default_rng(seed))
    return float(np.quantile(statistic(zs, gap, spread(share)).max(axis=1), 1 - FALSE_ALARMS))


def delay(zs: np.ndarray, at: np.ndarray, change_at: int, gap: float, share: float, limit: float, *, statistic=cusum) -> int | None:
    """Decisions from `change_at` to the first crossing of `limit` by `statistic` after it (pairs `zs` formed at
    decisions `at`)."""
    path = statistic(zs, gap, spread(share))
    crossed = np.flatnonzero((path > limit) & (at >= change_at))
    return int(at[crossed[0]] - change_at) if len(crossed) else None
