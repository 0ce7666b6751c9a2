"""Change detection on simulated decisions (two groups, a decision a minute): the evidence is the likelihood ratio it
says it is, streams that hold still alarm no more than the ARL implies, and a gap that moves is found, soon, dated
near where it moved, and found again when it moves back."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from fairstream.estimators.change import GapDetector, log_evidence
from fairstream.lab.changes.streams import decisions, detect, first_after


def _contrast_likelihood(zs: np.ndarray, shift: float, start: int, spread: float) -> float:
    """The likelihood of the pairs' contrasts: the pairs' Gaussian likelihood, mean shifted by `shift` from `start`
    on, integrated over the common mean (Wijsman's representation), computed numerically."""
    steps = np.where(np.arange(len(zs)) >= start, shift, 0.0)
    return integrate.quad(lambda mean: math.prod(stats.norm.pdf(zs, mean + steps, spread)), -3, 3, points=[float(zs.mean())])[0]


def test_the_evidence_is_the_mixed_likelihood_ratio_of_the_contrasts():
    rng = np.random.default_rng(3)
    zs, spread, scale = rng.normal(0.1, 0.6, 12), 0.6, 0.3
    null = _contrast_likelihood(zs, 0.0, 0, spread)
    for start in (3, 6, 10):
        mixed = integrate.quad(lambda shift, start=start: _contrast_likelihood(zs, shift, start, spread) * stats.norm.pdf(shift, 0, scale), -3, 3)[0]
        after = len(zs) - start
        computed = log_evidence(np.array([zs[start:].sum()]), np.array([float(after)]), float(zs.sum()), len(zs), spread**2, scale)[0]
        assert computed == pytest.approx(math.log(mixed / null), rel=1e-6)


def test_stationary_streams_alarm_no_more_than_the_arl_implies():
    runs, n, arl = 200, 10_000, 1e6
    alarms = sum(bool(detect(*decisions(seed, n), shift=0.1, arl=arl)) for seed in range(runs))
    implied = 1 - math.exp(-n / arl)  # a run length at least geometric with mean ARL
    assert alarms / runs <= implied + 3 * math.sqrt(implied * (1 - implied) / runs) + 1 / runs


def test_a_gap_that_moves_is_found_soon_and_dated_near_the_move():
    found = [first_after(*decisions(1000 + seed, 12_000, 8_000, 0.15), 8_000, 0.1, 1e6) for seed in range(60)]
    delays = [change.found_at - 8_000 for change, _ in found if change is not None]
    near = [abs(change.changed_at - 8_000) <= 750 for change, _ in found if change is not None]
    assert len(delays) >= 0.9 * len(found) and not any(early for _, early in found)
    assert np.median(delays) <= 2000 and np.mean(near) >= 0.8


def test_the_detector_starts_again_and_finds_a_second_change():
    rng = np.random.default_rng(4)
    detector, times = GapDetector(0.1, 1e6), []
    for index in range(30_000):
        gap = 0.0 if index < 10_000 else 0.2 if index < 20_000 else 0.0
        x, y = rng.random() < 0.5 + gap / 2, rng.random() < 0.5 - gap / 2
        change = detector.push(float(x) - float(y), index)
        if change is not None:
            times.append((change.direction, change.changed_at, change.before_band.interval(0.05), change.after_band.interval(0.05)))
    assert [direction for direction, *_ in times] == ["up", "down"], times
    assert abs(times[0][1] - 10_000) < 100 and abs(times[1][1] - 20_000) < 100  # the maximum-likelihood split
    (first_before, first_after_), (second_before, second_after) = times[0][2:], times[1][2:]
    assert first_before[0] <= 0 <= first_before[1] and first_after_[0] <= 0.2 <= first_after_[1]
    assert second_before[0] <= 0.2 <= second_before[1] and second_after[0] <= 0 <= second_after[1]
