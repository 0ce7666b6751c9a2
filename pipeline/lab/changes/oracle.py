"""The known-parameter oracle a change detector is measured against: a CUSUM on the same pairs that knows the gap
before and after the move and the pairs' spread, its threshold set so that 1 % of streams that hold still raise an
alarm within 10,000 decisions (lab).

Its null streams are drawn here, not through the monitor's pairing: a pair is one outcome of the smaller group against
the mean of r = majority/minority outcomes of the larger, both groups at `BASE`.
"""

from __future__ import annotations

import numpy as np

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


def threshold(share: float, gap: float, streams: int = 2000, seed: int = 0) -> float:
    """The oracle's threshold: `FALSE_ALARMS` of `streams` null streams cross it within `HORIZON` decisions."""
    zs = null_pairs(streams, share, np.random.default_rng(seed))
    return float(np.quantile(cusum(zs, gap, spread(share)).max(axis=1), 1 - FALSE_ALARMS))


def delay(zs: np.ndarray, at: np.ndarray, change_at: int, gap: float, share: float, limit: float) -> int | None:
    """Decisions from `change_at` to the oracle's first alarm after it (pairs `zs` formed at decisions `at`)."""
    path = cusum(zs, gap, spread(share))
    crossed = np.flatnonzero((path > limit) & (at >= change_at))
    return int(at[crossed[0]] - change_at) if len(crossed) else None
