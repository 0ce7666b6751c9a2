"""Contract of the per-group rate: MAP formula, revert, merge, pickling, undefined without data."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from fairstream.estimators import Rate, map_estimate
from fairstream.records.errors import InsufficientData


def filled(hits: list[bool]) -> Rate:
    rate = Rate()
    for hit in hits:
        rate.update(hit)
    return rate


@pytest.mark.parametrize("seed", range(5))
def test_map_estimate_matches_the_beta_posterior_mean(seed):
    rng = np.random.default_rng(seed)
    hits = list(rng.random(int(rng.integers(1, 200))) < rng.random())
    prior, kappa = float(rng.random()), float(rng.integers(0, 50))
    alpha, beta = sum(hits) + prior * kappa, len(hits) - sum(hits) + (1 - prior) * kappa
    assert filled(hits).get(prior, kappa) == pytest.approx(alpha / (alpha + beta), rel=1e-12)


def test_update_then_revert_is_a_no_op():
    rate = filled([True, False, True])
    rate.update(True)
    rate.revert(True)
    assert rate == filled([True, False, True])


def test_merge_equals_the_concatenated_data():
    left, right = [True, False, False], [True, True]
    merged = filled(left)
    merged += filled(right)
    assert merged == filled(left + right)


def test_pickle_round_trip():
    rate = filled([True, False])
    assert pickle.loads(pickle.dumps(rate)) == rate


def test_undefined_without_trials_and_prior_weight():
    with pytest.raises(InsufficientData):
        Rate().get(prior=0.5, confidence=0)
    assert Rate().get(prior=0.3, confidence=10) == pytest.approx(0.3)
    assert map_estimate(3, 4, 0.5, 0) == 0.75
