"""The fairness-shield paper's five classifiers: each penalty against its formula written out in NumPy, the gradient
reversal against its closed form, the trained networks against fairlearn's parity gap on rows they never saw, and the
same network whichever instructions the CPU offers."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache

import numpy as np
import pytest
from fairlearn.metrics import demographic_parity_difference
from sklearn.model_selection import train_test_split

from fairstream.lab.studies import paper_setup
from fairstream.lab.studies.fair_training import _ReverseGradient, hsic, parity_penalty, prejudice_index, train
from fairstream.lab.studies.portable_torch import PINNED, torch
from fairstream.records.errors import InputError
from tests.helpers import needs_data


@pytest.fixture
def batch():
    rng = np.random.default_rng(3)
    sensitive = rng.integers(0, 2, 300)
    scores = 1 / (1 + np.exp(-(rng.normal(size=300) + 0.8 * sensitive)))  # group b scores higher
    return scores, sensitive


def _tensor(values):
    return torch.as_tensor(values, dtype=torch.float64).reshape(-1, 1)


def test_diffdp_penalty_is_the_gap_of_mean_scores(batch):
    scores, sensitive = batch
    expected = abs(scores[sensitive == 0].mean() - scores[sensitive == 1].mean())
    assert parity_penalty(_tensor(scores), _tensor(sensitive)).item() == pytest.approx(expected, rel=1e-12)


def test_hsic_is_the_trace_of_the_centred_kernels(batch):
    scores, sensitive = batch
    m = len(scores)
    k = np.exp(-np.subtract.outer(scores, scores) ** 2)  # Gaussian kernels of width 1, written out
    l_ = np.exp(-np.subtract.outer(sensitive, sensitive).astype(float) ** 2)
    h = np.eye(m) - np.ones((m, m)) / m
    expected = np.trace(l_ @ h @ k @ h) / (m - 1) ** 2
    assert hsic(_tensor(scores), _tensor(sensitive)).item() == pytest.approx(expected, rel=1e-9)
    shuffled = np.random.default_rng(0).permutation(sensitive)  # the same groups, no longer tied to the scores
    assert hsic(_tensor(scores), _tensor(shuffled)).item() < expected / 5


def test_prejudice_index_sums_the_log_ratio_of_group_and_overall_rates(batch):
    scores, sensitive = batch
    overall = scores.mean()
    expected = 0.0
    for score, group in zip(scores, sensitive, strict=True):
        rate = scores[sensitive == group].mean()
        expected += score * np.log(rate / overall) + (1 - score) * np.log((1 - rate) / (1 - overall))
    assert prejudice_index(_tensor(scores), _tensor(sensitive)).item() == pytest.approx(expected, rel=1e-9)
    equal = np.full_like(scores, 0.4)
    assert prejudice_index(_tensor(equal), _tensor(sensitive)).item() == pytest.approx(0.0, abs=1e-12)


def test_gradient_reversal_passes_values_and_negates_gradients():
    x = torch.tensor([0.5, -2.0], requires_grad=True)
    y = _ReverseGradient.apply(x)
    (3 * y).sum().backward()
    assert y.tolist() == [0.5, -2.0]
    assert x.grad.tolist() == [-3.0, -3.0]


@cache
def _held_out_gaps(name: str) -> dict[str, tuple[float, float]]:
    """Per classifier, (accuracy, fairlearn's demographic-parity difference) on the held-out 60 % of `name`."""
    env = paper_setup.environment(name)
    frame = paper_setup.read(env)
    rows = np.arange(len(frame.labels))
    fit, held = train_test_split(rows, test_size=0.6, stratify=frame.labels, random_state=7)
    features = paper_setup.encode(frame.features.reset_index(drop=True), np.isin(rows, fit))
    out = {}
    for classifier in ("erm", "diffdp", "hsic", "pr", "laftr"):
        score = train(classifier, features[fit], frame.labels[fit], frame.sensitive[fit], env.batch, seed=7)
        decided = (score(features[held]) > 0.5).astype(int)
        accuracy = float((decided == frame.labels[held]).mean())
        out[classifier] = accuracy, demographic_parity_difference(frame.labels[held], decided, sensitive_features=frame.sensitive[held])
    return out


@needs_data("adult")
def test_fair_trainers_narrow_erms_parity_gap_on_rows_they_never_saw():
    results = _held_out_gaps("adult-gender")  # men earn > 50K three times as often as women: ERM's gap is wide
    erm_accuracy, erm_gap = results["erm"]
    assert erm_gap > 0.1
    for classifier, (accuracy, gap) in results.items():
        assert accuracy > 0.8, (classifier, accuracy)  # 75 % earn ≤ 50K: each learned more than the majority
        assert accuracy > erm_accuracy - 0.05, (classifier, accuracy, erm_accuracy)  # at a small price
        if classifier in ("diffdp", "hsic", "pr"):  # a penalty on the gap itself, or on the scores' tie to the group
            assert gap < erm_gap / 3, (classifier, gap, erm_gap)
    assert results["laftr"][1] < erm_gap  # an adversary on the code, weighted lightly (A_z = 2.1)


def test_training_is_repeatable_and_an_unknown_classifier_refused():
    rng = np.random.default_rng(1)
    features, labels, sensitive = rng.normal(size=(200, 5)), rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    first = train("hsic", features, labels, sensitive, 64, seed=2)(features)
    assert np.array_equal(first, train("hsic", features, labels, sensitive, 64, seed=2)(features))
    assert not np.array_equal(first, train("hsic", features, labels, sensitive, 64, seed=3)(features))
    with pytest.raises(InputError, match="unknown classifier 'adv'; known: diffdp, erm, hsic, laftr, pr"):
        train("adv", features, labels, sensitive, 64, seed=2)


TRAIN_AND_HASH = """
import hashlib, sys
import numpy as np
from fairstream.lab.studies.fair_training import train
from fairstream.lab.studies.portable_torch import kernels
rng = np.random.default_rng(5)
features, sensitive = rng.normal(size=(600, 20)), rng.integers(0, 2, 600)
labels = (features[:, 0] + 0.5 * sensitive + rng.normal(size=600) > 0).astype(int)
scores = train(sys.argv[1], features, labels, sensitive, 128, seed=4)(features)
print(kernels(), hashlib.sha256(scores.tobytes()).hexdigest())
"""
CPUS = {
    "this CPU": {},
    "AVX2, no AVX-512": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"},
    "SSE4.2": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"},
}
"""Older CPUs, as torch, MKL and NumPy can be told to act them out on this one (unpinned, the first two train different
LAFTR and HSIC networks here)."""


@pytest.mark.parametrize("classifier", ["hsic", "laftr"])
def test_the_same_network_whichever_instructions_the_cpu_offers(classifier):
    hashes = {}
    for cpu, limits in CPUS.items():
        env = {name: value for name, value in os.environ.items() if name not in PINNED} | limits  # the child pins itself
        done = subprocess.run([sys.executable, "-c", TRAIN_AND_HASH, classifier], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        hashes[cpu] = done.stdout.split()
    assert {kernels for kernels, _ in hashes.values()} == {"portable"}
    assert len({digest for _, digest in hashes.values()}) == 1, hashes
