"""Verdict rules: point, confident and anytime modes, ratios, explicit pairs and hysteresis."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from fairstream.estimators import INTERVALS, GapBet
from fairstream.verdicts.judge import VerdictRule, judge

ESTIMATES = {"a": 0.5, "b": 0.2, "c": 0.4}


def test_point_gap_is_max_minus_min_naming_the_pair():
    verdict = judge(VerdictRule(threshold=0.25), ESTIMATES)
    assert verdict.pair == ("a", "b") and verdict.gap == pytest.approx(0.3) and verdict.violated


def test_hysteresis_separates_violation_from_recovery():
    rule = VerdictRule(threshold=0.25, hysteresis=0.05)
    inside_band = judge(rule, {"a": 0.5, "b": 0.27})
    assert not inside_band.violated and not inside_band.clear
    assert judge(rule, {"a": 0.5, "b": 0.31}).clear


def test_explicit_pairs_ignore_other_groups():
    verdict = judge(VerdictRule(threshold=0.15, pairs=(("a", "c"),)), ESTIMATES)
    assert verdict.pair == ("a", "c") and not verdict.violated


def test_ratio_rule_is_the_four_fifths_rule():
    verdict = judge(VerdictRule(threshold=0.8, ratio=True), {"a": 0.5, "b": 0.42})
    assert verdict.ratio == pytest.approx(0.84) and not verdict.violated
    assert judge(VerdictRule(threshold=0.8, ratio=True), {"a": 0.5, "b": 0.38}).violated


def test_confident_needs_the_whole_interval_beyond_epsilon():
    counts = {"a": (60, 100), "b": (30, 100)}
    kind = INTERVALS["wilson"]

    def difference(high, low, alpha):
        return kind.difference(*counts[high], *counts[low], alpha, 0.5, 0)

    estimates = {g: s / n for g, (s, n) in counts.items()}
    strict = judge(VerdictRule("confident", threshold=0.2), estimates, difference=difference)
    loose = judge(VerdictRule("confident", threshold=0.1), estimates, difference=difference)
    assert strict.gap == pytest.approx(0.3) and not strict.violated  # 0.3 > 0.2, but the interval reaches below 0.2
    assert loose.violated and loose.interval[0] > 0.1


def test_anytime_rejects_only_after_enough_evidence_and_never_clears():
    rng = np.random.default_rng(1)
    bet = GapBet(0.1)
    verdicts = []
    for _ in range(400):
        bet.update(float(rng.random() < 0.6), float(rng.random() < 0.2))
        verdicts.append(judge(VerdictRule("anytime", threshold=0.1), {"a": 0.6, "b": 0.2}, bets={("a", "b"): bet}))
    assert not verdicts[0].violated and verdicts[-1].violated
    assert all(v.clear is False for v in verdicts) and verdicts[-1].pair == ("a", "b")


def test_fewer_than_two_groups_gives_no_verdict():
    assert judge(VerdictRule(), {"a": 0.5}).violated is None


def test_a_point_verdict_names_the_widest_pair_as_the_pairs_by_name_do_also_for_ties():
    """The highest and lowest group found in one pass name the same pair as comparing every pair (largest gap, then the
    larger pair by name), also where estimates are equal or gaps are equal once rounded."""
    rng = random.Random(7)
    for _ in range(20_000):
        estimates = {f"g{index}": rng.choice([0.1, 0.2, 0.3, 1 / 3, 0.30000000000000004, rng.random(), 0.5 + rng.random() * 1e-16]) for index in range(rng.randint(2, 7))}
        ordered = [(a, b) if estimates[a] >= estimates[b] else (b, a) for a, b in itertools.combinations(sorted(estimates), 2)]
        widest = max(ordered, key=lambda pair: (estimates[pair[0]] - estimates[pair[1]], pair))
        verdict = judge(VerdictRule(threshold=0.05), estimates)
        assert (verdict.pair, verdict.gap) == (widest, estimates[widest[0]] - estimates[widest[1]])
