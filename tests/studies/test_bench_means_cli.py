"""`fairstream bench means`: both verdicts on the same simulated streams, and the delay ratio as its last line."""

from __future__ import annotations

from click.testing import CliRunner

from fairstream.cli import cli


def test_bench_means_prints_both_verdicts_and_the_delay_ratio():
    result = CliRunner().invoke(cli, ["bench", "means", "--runs", "200", "--steps", "200"], env={"NO_COLOR": "1", "COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "anytime (betting)" in result.stdout and "fixed-time (t), read every trial" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("false alarms: anytime ")
