"""`fairstream bench means`: both verdicts on the same simulated streams, and the delay ratio as its last line."""

from __future__ import annotations

from click.testing import CliRunner

from fairstream.cli import cli


def test_bench_means_prints_both_verdicts_and_the_delay_ratio():
    result = CliRunner().invoke(cli, ["bench", "means", "--runs", "200", "--steps", "200"], env={"NO_COLOR": "1", "COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "anytime (betting)" in result.stdout and "fixed-time (t), read every trial" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("false alarms: anytime ")


def test_the_oracle_of_the_means_study_reaches_power_0_8_in_a_simulation():
    """The closed form against a simulation of the fixed-sample test it describes: Beta outcomes, ε = 0.1, α = 0.05."""
    import numpy as np
    from scipy import stats

    from fairstream.lab.studies.mean_alarms import SPREAD, oracle_trials

    n = round(oracle_trials(0.8, 0.55, epsilon=0.1, alpha=0.05))
    rng = np.random.default_rng(2)
    a = rng.beta(0.8 * SPREAD, 0.2 * SPREAD, (20000, n))
    b = rng.beta(0.55 * SPREAD, 0.45 * SPREAD, (20000, n))
    se = np.sqrt((0.8 * 0.2 + 0.55 * 0.45) / (SPREAD + 1) / n)
    power = np.mean((a.mean(axis=1) - b.mean(axis=1) - 0.1) / se > stats.norm.ppf(0.975))
    assert abs(power - 0.8) < 0.03
