"""`fairstream bench monitors`: the monitors it writes form one job over one read of the input, each with its own
threshold, and the command prints one row per publishing mode with the ratio of the two runs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.compiler.load import load_plans
from fairstream.dataflow.flow import trial_groups
from fairstream.lab.bench.monitors import monitor_specs


def test_the_monitors_share_one_read_and_three_trial_layouts_each_with_its_own_threshold(tmp_path):
    plans = load_plans([str(monitor_specs(12, tmp_path / "specs", "30d"))])
    assert len({plan.spec.monitor for plan in plans}) == 12
    assert len({(plan.spec.metric.type, plan.spec.metric.threshold) for plan in plans}) == 12
    assert all(plan.spec.metric.threshold <= 1 for plan in plans)
    assert sorted(len(group) for group in trial_groups(plans)) == [4, 4, 4]  # monitors of one bundled spec share their trials
    assert {plan.spec.publish.every for plan in plans} == {("time", 30 * 86_400_000)}


def test_bench_monitors_prints_both_publishing_modes_and_their_ratios():
    result = CliRunner().invoke(cli, ["bench", "monitors", "--events", "3000", "--monitors", "4"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [[cell.strip() for cell in line.split("│")] for line in result.stdout.splitlines() if "│" in line]
    assert [row[0] for row in rows] == ["every evaluation", "every 30d"]
    for _mode, one, many, ratio in rows:
        assert float(many.rstrip(" s")) / float(one.rstrip(" s")) == pytest.approx(float(ratio.rstrip("×")), rel=0.03)  # of rounded seconds
