"""`fairstream bench means`: false alarms and detection delay of the anytime verdicts on mean outcomes against
fixed-time ones read after every trial, over simulated streams."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.studies.mean_alarms import false_certificates, gap_alarms, oracle_trials


def _delay(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


@click.command()
@click.option("--runs", default=1000, show_default=True, type=click.IntRange(10), help="Simulated streams per case.")
@click.option("--steps", default=500, show_default=True, type=click.IntRange(10), help="Trials per group and stream, each followed by a check.")
@click.option("--threshold", default=0.1, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True), help="ε on the gap of means.")
@click.option("--alpha", default=0.05, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True), help="α of the gap verdicts, δ of the constraints.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@reports_errors
def means(runs: int, steps: int, threshold: float, alpha: float, seed: int) -> None:
    """Delayed impact checked after every trial: the anytime gap test and confidence sequences against the fixed-time
    t test and t bound, on fair streams (false alarms) and unfair ones (detection delay)."""
    boundary = gap_alarms(0.55 + threshold, 0.55, epsilon=threshold, alpha=alpha, runs=runs, steps=steps, seed=seed)
    unfair = gap_alarms(0.55 + threshold + 0.15, 0.55, epsilon=threshold, alpha=alpha, runs=runs, steps=steps, seed=seed + 1)
    constraint = false_certificates(0.6, delta=alpha, runs=runs, steps=steps, seed=seed + 2)
    rows = []
    for name, index in (("anytime (betting)", 0), ("fixed-time (t), read every trial", 1)):
        rows.append(
            (
                name,
                f"{boundary.rates()[index]:.1%}",
                f"{unfair.rates()[index]:.1%}",
                _delay(unfair.median_delays()[index]),
                f"{constraint.rates()[index]:.1%}",
            )
        )
    console.table(
        f"Mean outcomes in [0, 1], ε = {threshold}, α = δ = {alpha}: {runs:,} streams of {steps:,} trials per group, checked after every trial",
        ["verdict", f"false alarms (gap = ε, target ≤ {alpha:.0%})", "detected (gap = ε + 0.15)", "median trials to detect", "false certificates (mean = τ)"],
        rows,
        right=(1, 2, 3, 4),
    )
    (any_boundary, fixed_boundary), (any_delay, _) = boundary.rates(), unfair.median_delays()
    oracle = oracle_trials(0.55 + threshold + 0.15, 0.55, epsilon=threshold, alpha=alpha)
    ratio = f"{any_delay / oracle:.1f}× the oracle's {oracle:.0f}" if any_delay else "undefined"
    console.console.print(
        "oracle: a fixed-sample two-sided test at level α that knows the means and spread, power 0.8; the fixed-time "
        "test read every trial is no detection procedure (its false alarms above), so its delay compares with nothing",
        soft_wrap=True,
    )
    console.console.print(
        f"false alarms: anytime {any_boundary:.1%}, fixed-time {fixed_boundary:.1%}; anytime detection delay {ratio}",
        soft_wrap=True,
    )
