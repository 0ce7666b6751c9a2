"""`fairstream bench shield` on a small stream: exit code, both flows' rows, an overhead and ratio that follow from
the rows, a synthesis time for every horizon (timings vary, so they are not compared), the two-group synthesis's
member and bound, FinHzn's largest horizon within 10 s, and every decision's answer in process, over HTTP and through
Kafka."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from fairstream.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


def test_prints_both_flows_and_the_overhead_and_ratio_their_rows_give():
    args = ["bench", "shield", "--decisions", "1000", "--repeat", "1", "--group-horizons", "600", "--finhzn-horizons", "20,40", "--no-kafka", "--latency-seconds", "1", "--latency-rate", "500"]
    result = CliRunner().invoke(cli, args, env=ENV)
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
    members, alpha, bound = (float(cell) for cell in rows["600"][1:])  # the two-group synthesis: 8 members to tolerance 0.01
    assert members == 8 and 0 < alpha < 1 and bound <= 0.05
    assert float(rows["20"][0]) > 0 and float(rows["40"][0]) > 0
    assert "largest T filled within 10 s: 40" in result.output
    for path in ("in process", "over HTTP"):
        p50, p99, answered, _target = rows[path]
        assert 0 < float(p50) <= float(p99) and answered == "450", path  # 500 decisions, the first tenth left out
    assert rows["over HTTP"][3] == "≤ 10 ms (quiet machine)"
    reached = re.search(r"over HTTP as fast as 8 callers get answers: ([\d,]+) decisions/s", result.output)
    assert reached is not None and int(reached[1].replace(",", "")) > 0


def test_horizons_that_are_not_whole_numbers_are_refused_with_the_option_named():
    result = CliRunner().invoke(cli, ["bench", "shield", "--finhzn-horizons", "20,x"], env=ENV)
    assert result.exit_code == 2 and "--finhzn-horizons" in result.output and "whole numbers" in result.output


@pytest.mark.kafka
def test_the_latency_through_kafka_is_measured_on_every_answer(kafka_bootstrap):
    args = ["bench", "shield", "--decisions", "1000", "--repeat", "1", "--group-horizons", "", "--finhzn-horizons", "", "--latency-seconds", "2", "--latency-rate", "200", "--bootstrap", kafka_bootstrap]
    result = CliRunner().invoke(cli, args, env=ENV)
    assert result.exit_code == 0, result.output
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.split("│")] for line in result.output.splitlines() if "│" in line)}
    p50, p99, answered, target = rows["through Kafka"]
    assert 0 < float(p50) <= float(p99) and answered == "360" and target == "≤ 100 ms (quiet machine)"  # every one of 400 answered, the first tenth left out
