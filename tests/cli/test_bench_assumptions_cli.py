"""`fairstream bench assumptions` on ten streams a setting: every setting's row, warning rates whose intervals are the
exact binomial ones of their counts, and the checks holding (no false warning on clean streams, every drift found
after it began)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from scipy.stats import beta

from fairstream.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "240"}


@pytest.fixture(scope="module")
def rows() -> list[list[str]]:
    result = CliRunner().invoke(cli, ["bench", "assumptions", "--runs", "10"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "9 settings in" in result.output
    return [[cell.strip() for cell in line.split("│")] for line in result.output.splitlines() if "│" in line]


def test_every_setting_holds(rows):
    assert len(rows) == 9 and all(row[-1] == "yes" for row in rows)
    clean, broken = [row for row in rows if row[4] != "detection"], [row for row in rows if row[4] == "detection"]
    assert len(clean) == 4 and all(row[3].startswith("0.000") for row in clean)
    assert len(broken) == 5 and all(row[3].startswith("1.000") and row[6] == "0" for row in broken)


def test_the_intervals_are_clopper_pearson(rows):
    for row in rows:
        rate, interval = row[3].split(" ", 1)
        warned = round(float(rate) * int(row[2]))
        low = beta.ppf(0.025, warned, 10 - warned + 1) if warned else 0.0
        high = beta.ppf(0.975, warned + 1, 10 - warned) if warned < 10 else 1.0
        assert interval == f"[{low:.3f}, {high:.3f}]"
