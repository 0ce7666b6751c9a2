"""Change detection on simulated decisions (two groups 1:1, a decision a minute): false alarms on stationary streams
within what the ARL implies, and a gap that moves from 0 to 0.15 found, soon, and dated near where it moved."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairstream.estimators.change import GapCusum, threshold
from fairstream.lab.changes.streams import decisions, detect, study


def test_the_threshold_gives_siegmunds_run_length():
    for k, arl in ((0.1, 1e5), (0.25, 1e6), (0.5, 930)):
        b = threshold(k, arl) + 1.166
        assert (math.exp(2 * k * b) - 2 * k * b - 1) / (2 * k * k) == pytest.approx(arl, rel=1e-9)


def test_stationary_streams_alarm_no_more_than_the_arl_implies():
    runs, n, arl = 200, 10_000, 1e6
    alarms = sum(bool(detect(*decisions(seed, n), shift=0.1, arl=arl)) for seed in range(runs))
    implied = 1 - math.exp(-n / arl)  # a run length at least geometric with mean ARL
    assert alarms / runs <= implied + 3 * math.sqrt(implied * (1 - implied) / runs) + 1 / runs


def test_a_gap_that_moves_is_found_soon_and_dated_near_the_move():
    measured = study(runs=100, seed=1000)
    assert measured.found >= 0.9
    assert measured.median_delay is not None and measured.median_delay <= 2000
    assert measured.near_share >= 0.7


def test_the_detector_starts_again_and_finds_a_second_change():
    rng = np.random.default_rng(4)
    detector, times = GapCusum(0.1, 1e6), []
    for index in range(30_000):
        gap = 0.0 if index < 10_000 else 0.2 if index < 20_000 else 0.0
        x, y = rng.random() < 0.5 + gap / 2, rng.random() < 0.5 - gap / 2
        change = detector.push(float(x) - float(y), index)
        if change is not None:
            times.append((change.direction, change.changed_at, change.before_band.interval(0.05), change.after_band.interval(0.05)))
    assert [direction for direction, *_ in times] == ["up", "down"], times
    assert abs(times[0][1] - 10_000) < 100 and abs(times[1][1] - 20_000) < 100  # the maximum-likelihood split
    (first_before, first_after), (second_before, second_after) = times[0][2:], times[1][2:]
    assert first_before[0] <= 0 <= first_before[1] and first_after[0] <= 0.2 <= first_after[1]
    assert second_before[0] <= 0.2 <= second_before[1] and second_after[0] <= 0 <= second_after[1]
