"""`fairstream bench guarantees` and `fairstream bench detection`: their tables, checked against closed forms."""

from __future__ import annotations

import re

from click.testing import CliRunner
from scipy import stats

from fairstream.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "250"}


def test_bench_guarantees_prints_every_condition_with_its_monte_carlo_error():
    result = CliRunner().invoke(cli, ["bench", "guarantees", "--runs", "60", "--stream-runs", "3"], env=ENV)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "│" in line and "±" in line]
    assert len(rows) == 54 + 2 + 4 + 2 + 2
    for row in rows:
        rate, error = (float(x) for x in re.search(r"(\d\.\d{3}) ± (\d\.\d{3})", row).groups())
        assert abs(error - (rate * (1 - rate) / (3 if "anytime" in row else 60)) ** 0.5) < 1e-3 or rate in (0.0, 1.0)
    assert result.stdout.splitlines()[-1].startswith("64 conditions in")


def test_bench_detection_prints_every_ratio_asked_for_and_the_oracle():
    result = CliRunner().invoke(cli, ["bench", "detection", "--seeds", "2", "--n", "150", "--jobs", "1", "--ratio", "1:1", "--ratio", "1:9"], env=ENV)
    assert result.exit_code == 0, result.output
    rows = [line.split("│") for line in result.stdout.splitlines() if line.count("│") >= 9]
    assert [(row[0].strip(), row[1].strip()) for row in rows] == [(r, m) for r in ("1:1", "1:9") for m in ("point", "confident", "anytime")]
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    for row in rows:
        share = 0.5 if row[0].strip() == "1:1" else 0.1
        oracle = z**2 * (0.25 / share + 0.16 / (1 - share)) / 0.2**2  # unfair rates 0.5 vs 0.2, ε = 0.1
        assert int(row[7]) == round(oracle)
        assert re.fullmatch(r"(> )?\d\.\d\d \((> )?\d\.\d\d–(> )?\d\.\d\d\)", row[8].strip()), row[8]


def test_bench_detection_refuses_a_ratio_that_is_not_two_whole_numbers():
    result = CliRunner().invoke(cli, ["bench", "detection", "--ratio", "1:x"], env=ENV)
    assert result.exit_code == 2
    assert "expected two positive whole numbers as M:F" in result.output
