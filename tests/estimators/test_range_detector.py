"""The range detector: its recursion is the mixture over start points it claims to be, its false-warning level holds
on streams whose mean stays in range (even when it moves inside), and a mean that leaves is found."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from fairstream.estimators.range_detector import STAKE_FRACTIONS, RangeDetector


def direct_mixture(xs: list[float], low: float, high: float) -> float:
    """Σ_s w_s Π_{i=s..t} f_i averaged over the stakes, summed start by start (quadratic): the definition itself."""
    values = []
    for worst, payoff in ((high, lambda x: x - high), (1 - low, lambda x: low - x)):
        for fraction in STAKE_FRACTIONS:
            stake = fraction / worst
            values.append(sum(1 / (s * (s + 1)) * math.prod(1 + stake * payoff(x) for x in xs[s - 1 :]) for s in range(1, len(xs) + 1)))
    return sum(values) / len(values)


def test_the_recursion_is_the_mixture_over_start_points():
    xs = np.random.default_rng(2).random(60).round(2).tolist()
    detector = RangeDetector(0.3, 0.5, level=1e-12)
    for x in xs:
        detector.update(x)
    assert detector.evidence == pytest.approx(direct_mixture(xs, 0.3, 0.5), rel=1e-9)


@pytest.mark.parametrize(("rates", "low", "high"), [((0.6,), 0.6, 0.6), ((0.2, 0.4), 0.2, 0.4)])
def test_false_warnings_stay_under_the_level(rates, low, high):
    # 400 streams of 2,000 at level 0.05: the mean is one rate, or alternates between the ends of the range in blocks
    rng, runs, level = np.random.default_rng(5), 400, 0.05
    warned = 0
    for _ in range(runs):
        p = np.repeat(np.resize(rates, 20), 100)
        detector = RangeDetector(low, high, level)
        for x in (rng.random(2000) < p).tolist():
            detector.update(float(x))
        warned += detector.broken
    assert warned <= binom.ppf(0.999, runs, level)


def test_a_mean_that_leaves_is_found_soon_after():
    rng = np.random.default_rng(6)
    found = []
    for _ in range(40):
        detector = RangeDetector(0.6, 0.6, 0.01)
        for x in np.concatenate([rng.random(1000) < 0.6, rng.random(2000) < 0.8]).tolist():
            detector.update(float(x))
        found.append(detector.alarm_at)
    delays = np.array(found) - 1000
    assert (delays > 0).mean() >= 0.95 and np.median(delays) < 400


def test_edges_of_the_unit_interval_cannot_be_crossed():
    detector = RangeDetector(0.0, 1.0, 0.01)
    for _ in range(500):
        detector.update(1.0)
    assert not detector.broken and detector.evidence <= 1.0


@pytest.mark.parametrize(("low", "high", "level", "message"), [(0.5, 0.4, 0.01, "0 ≤ low ≤ high ≤ 1"), (0.1, 0.2, 1.0, "level must lie in (0, 1)")])
def test_bad_settings_say_what_is_wrong(low, high, level, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RangeDetector(low, high, level)
