"""`fairstream bench shield` on a small stream: exit code, both flows' rows, an overhead and ratio that follow from
the rows, and a synthesis time for every horizon (timings vary, so they are not compared)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from fairstream.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


def test_prints_both_flows_and_the_overhead_and_ratio_their_rows_give():
    result = CliRunner().invoke(cli, ["bench", "shield", "--decisions", "1000", "--repeat", "1"], env=ENV)
    assert result.exit_code == 0, result.output
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.split("│")] for line in result.output.splitlines() if "│" in line)}
    passthrough, shielded = rows["passthrough (read, parse)"], rows["shield (read, parse, order, shield, records)"]
    fast, slow = float(passthrough[0]), float(shielded[0])  # seconds, printed to 4 decimals: each within ± 5e-5
    assert 1000 / (fast + 5e-5) - 0.5 <= float(passthrough[1].replace(",", "")) <= 1000 / (fast - 5e-5) + 0.5
    overhead = re.search(r"overhead: (-?[\d.]+) µs per decision; shield / passthrough rate: ([\d.]+)", result.output)
    assert overhead is not None
    assert float(overhead[1]) == pytest.approx((slow - fast) / 1000 * 1e6, abs=0.1 + 0.05)
    assert (fast - 5e-5) / (slow + 5e-5) - 0.005 <= float(overhead[2]) <= (fast + 5e-5) / (slow - 5e-5) + 0.005
    assert [horizon for horizon in ("500", "1000", "2000", "5000") if horizon not in rows] == []
    assert all(float(rows[horizon][0]) > 0 for horizon in ("500", "1000", "2000", "5000"))
