"""`fairstream bench detection`: false alarms and detection delay of the hiring monitor under each verdict mode."""

from __future__ import annotations

import time

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.studies.detection import MODES, POWER, PRIOR, RATIOS, run_detection
from fairstream.studies.hiring import FAIR, UNFAIR


@click.command()
@click.option(
    "--seeds", default=50, show_default=True, type=click.IntRange(1), help="Seeds 0..S-1; each gives one fair and one unfair stream."
)
@click.option("--n", "decisions", default=1000, show_default=True, type=click.IntRange(1), help="Decisions per stream.")
@click.option("--confidence", default=24.0, show_default=True, type=click.FloatRange(0), help="κ: weight of the prior in pseudo-trials.")
@click.option(
    "--threshold",
    default=0.1,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="ε: largest tolerated gap in hire rate.",
)
@click.option(
    "--alpha",
    default=0.05,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="α: error level of confident and anytime verdicts.",
)
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(1), help="Processes that monitor seeds side by side.")
@reports_errors
def detection(seeds: int, decisions: int, confidence: float, threshold: float, alpha: float, jobs: int) -> None:
    """Run the hiring monitor in every verdict mode over the same seeded fair and unfair streams at group ratios 1:1 and 1:4;
    report false alarms with their Monte Carlo error and detection delay against an oracle z test."""
    started = time.perf_counter()
    with console.progress() as progress:
        task = progress.add_task("monitoring", total=2 * seeds * len(MODES) * len(RATIOS))
        study = run_detection(
            seeds,
            decisions,
            confidence=confidence,
            threshold=threshold,
            alpha=alpha,
            workers=jobs,
            on_run=lambda _mode, _run: progress.advance(task),
        )
    elapsed = time.perf_counter() - started
    fair, unfair = (f"{male}/{female}" for male, female in (FAIR, UNFAIR))
    console.console.print(
        f"{seeds} fair ({fair}) and {seeds} unfair ({unfair}) streams × {decisions} decisions per ratio; "
        f"prior {PRIOR}, κ = {confidence:g}, ε = {threshold}, α = {alpha}; the spec's default intervals"
    )
    console.table(
        "Hiring demographic parity by verdict mode",
        ["male : female", "mode", "false alarms: any", "at the end", "delay: median", "p10", "p90", "oracle", "median / oracle", "undetected"],
        [
            (
                f"{s.ratio[0]}:{s.ratio[1]}",
                s.mode,
                f"{s.false_alarm_rate:.3f} ± {s.false_alarm_error:.3f}",
                f"{s.false_alarm_rate_at_end:.3f} ± {s.false_alarm_error_at_end:.3f}",
                _decisions(s.delay_median),
                _decisions(s.delay_p10),
                _decisions(s.delay_p90),
                f"{s.oracle:.0f}",
                console.fmt(s.delay_over_oracle) if s.delay_over_oracle is None else f"{s.delay_over_oracle:.2f}",
                f"{s.unfair_missed} / {seeds}",
            )
            for s in study.modes
        ],
        right=range(2, 10),
    )
    console.console.print(
        "false alarms: share of fair streams, ± one Monte Carlo standard error (any: read after every decision; at the end: "
        "at the last one); delay: decisions until the first violation alert on unfair ones; oracle: decisions a fixed-sample "
        f"two-sided z test at level α that knows the effect size needs for power {POWER}"
    )
    console.console.print(f"{2 * seeds * len(MODES) * len(RATIOS)} runs in {elapsed:.1f} s")


def _decisions(value: float | None) -> str:
    return console.fmt(value) if value is None else f"{value:g}"
