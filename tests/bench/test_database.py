"""`fairstream bench database`: SQL written from the seminar spec's meaning (SQLite and DuckDB, naive and incremental)
gives the monitor's verdict at every evaluation, and the command prints the comparison."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.lab.bench.database import measure_size


@pytest.mark.parametrize("seed", [0, 3])
def test_every_database_baseline_reaches_the_monitors_verdicts(seed):
    result = measure_size(300, ["sqlite naive", "sqlite incremental", "duckdb naive"], seed=seed)
    assert result.evaluations == 300
    assert {name: timing.agrees for name, timing in result.baselines.items()} == dict.fromkeys(result.baselines, True)


def test_bench_database_prints_a_row_per_size_and_the_agreement():
    result = CliRunner().invoke(cli, ["bench", "database", "--applicants", "100,200", "--naive-up-to", "100"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "│" in line]
    assert [row.split("│")[0].strip() for row in rows] == ["100", "200"]
    assert rows[1].split("│")[3].strip() == "–"  # the naive baselines stop at --naive-up-to
    assert result.stdout.splitlines()[-1].endswith("verdicts identical to the monitor's: all")
