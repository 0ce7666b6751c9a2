"""The evidence-floor study: its simulated false alarms agree with the exact binomial computation, and the default
floor keeps a fair group's first-check false alarms near one in twenty."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from fairstream.cli import cli
from fairstream.lab.studies.evidence import REFERENCE_SHARE, simulate_floors
from fairstream.language.metric import default_floor


def exact_first_check(floor: int, rate: float, threshold: float) -> float:
    """P(|X/n − Y/m| > ε) for X ~ Bin(n, p), Y ~ Bin(m, p) independent, m = 10 n: the sum over the joint pmf."""
    n, m = floor, REFERENCE_SHARE * floor
    x, y = np.arange(n + 1), np.arange(m + 1)
    joint = np.outer(stats.binom.pmf(x, n, rate), stats.binom.pmf(y, m, rate))
    return float(joint[np.abs(x[:, None] / n - y[None, :] / m) > threshold].sum())


@pytest.mark.parametrize("floor", [30, 100])
def test_first_check_false_alarms_match_the_binomial_computation(floor):
    runs = 20_000
    (result,) = simulate_floors(0.1, [floor], runs=runs, seed=1)
    for rate, share in result.first_check.items():
        exact = exact_first_check(floor, rate, 0.1)
        assert share == pytest.approx(exact, abs=5 * np.sqrt(exact * (1 - exact) / runs) + 1e-3), rate
        assert result.any_check[rate] >= share


@pytest.mark.parametrize("threshold", [0.05, 0.1, 0.2])
def test_the_default_floor_keeps_first_check_false_alarms_near_one_in_twenty(threshold):
    floor = default_floor(threshold)
    assert floor == round(1 / threshold**2)
    worst = max(exact_first_check(floor, rate, threshold) for rate in (0.1, 0.3, 0.5))
    assert 0.03 < worst < 0.07


def test_bench_evidence_prints_the_default_and_its_false_alarms():
    result = CliRunner().invoke(cli, ["bench", "evidence", "--runs", "2000", "--floors", "10,50"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "100 (default)" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("default floor at ε = 0.1: 100 trials (⌈1/ε²⌉)")

