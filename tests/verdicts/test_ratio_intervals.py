"""Disparate-impact intervals agree with their verdicts: two-sided, holding the raw ratio, certified exactly when the
lower end is at τ or above and violated when the upper end is below; at the boundary (a true ratio of exactly τ) a
simulation finds false certificates and false violations each within α; anytime ratios publish the confidence sequence
their verdict is read from."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from scipy.stats.contingency import relative_risk

from fairstream.estimators.intervals import katz_ratio
from fairstream.runner import run_file
from fairstream.verdicts.judge import VerdictRule, judge

TAU, ALPHA = 0.8, 0.05


def test_at_the_boundary_neither_claim_exceeds_alpha():
    rng = np.random.default_rng(11)
    rule = VerdictRule(mode="confident", threshold=TAU, alpha=ALPHA, ratio=True)
    runs, certified, violated = 4000, 0, 0
    for _ in range(runs):
        counts = {"a": (int(rng.binomial(400, 0.5)), 400), "b": (int(rng.binomial(400, 0.4)), 400)}  # ratio 0.4 / 0.5 = τ
        raw = {group: hits / trials for group, (hits, trials) in counts.items()}
        ratio = lambda high, low, alpha, counts=counts: katz_ratio(*counts[low], *counts[high], alpha)  # noqa: E731
        verdict = judge(rule, raw, raw=raw, level=lambda _pair: ALPHA, ratio=ratio)
        certified += bool(verdict.certified)
        violated += bool(verdict.violated)
        low, high = verdict.interval
        assert low <= verdict.raw_ratio <= high
        assert verdict.certified == (low >= TAU) and verdict.violated == (high < TAU)
    error = 3 * math.sqrt(ALPHA * (1 - ALPHA) / runs)
    assert certified / runs <= ALPHA + error and violated / runs <= ALPHA + error
    assert certified > 0 and violated > 0  # the boundary is reachable from both sides: the test is not vacuous


@pytest.mark.parametrize(("low", "n_low", "high", "n_high"), [(40, 100, 50, 100), (7, 30, 25, 40), (300, 1000, 310, 900)])
def test_katz_interval_is_scipys_relative_risk_interval(low, n_low, high, n_high):
    expected = relative_risk(low, n_low, high, n_high).confidence_interval(0.9)
    assert katz_ratio(low, n_low, high, n_high, 0.1) == pytest.approx((expected.low, expected.high), rel=1e-9)


@pytest.fixture(scope="module", params=["confident", "anytime"])
def compas(request, specs_dir, compas_csv, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    spec = yaml.safe_load((specs_dir / "compas_disparate_impact.yaml").read_text())
    spec["estimator"] = {"prior": 0.5, "confidence": 100, "verdict": request.param, "alpha": ALPHA}
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec))
    return request.param, run_file(folder / "spec.yaml", compas_csv, folder / "out").read("estimates.jsonl")


def test_ratio_intervals_hold_their_point_and_name_their_validity(compas):
    mode, estimates = compas
    checked = 0
    for record in estimates:
        body = record["parts"]["selection_rate"]
        if body.get("interval") is None:
            continue
        low, high = body["interval"]
        assert body["interval_of"] == "raw_ratio" and low <= body["raw_ratio"] <= high and 0 <= low <= high <= 1
        assert body["interval_validity"] == ("fixed_time" if mode == "confident" else "anytime")
        if not body.get("interval_widened"):  # either mode: the verdict is read off the interval the record publishes
            assert (body["status"] == "certified") == (low >= TAU)
            assert (body["status"] == "violated") == (high < TAU)
            checked += 1
    assert checked > 500
