"""`fairstream bench detection`: false alarms and detection delay of the hiring monitor under each verdict mode."""

from __future__ import annotations

import math
import time

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.studies.detection import MODES, POWER, PRIOR, RATIOS, ModeSummary, run_detection
from fairstream.lab.studies.hiring import FAIR, UNFAIR


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
@click.option(
    "--ratio",
    "ratios",
    multiple=True,
    callback=lambda _ctx, _param, values: tuple(_ratio(value) for value in values) or RATIOS,
    help="Group sizes male:female to run, repeatable (default 1:1, 1:4 and 1:9).",
)
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(1), help="Processes that monitor seeds side by side.")
@reports_errors
def detection(seeds: int, decisions: int, confidence: float, threshold: float, alpha: float, ratios: tuple[tuple[int, int], ...], jobs: int) -> None:
    """Run the hiring monitor in every verdict mode over the same seeded fair and unfair streams at each ratio of group
    sizes; report false alarms with their Monte Carlo error and detection delay against an oracle z test."""
    started = time.perf_counter()
    with console.progress() as progress:
        task = progress.add_task("monitoring", total=2 * seeds * len(MODES) * len(ratios))
        study = run_detection(
            seeds,
            decisions,
            confidence=confidence,
            threshold=threshold,
            alpha=alpha,
            ratios=ratios,
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
                _decisions(s.delay_median, decisions),
                _decisions(s.delay_p10, decisions),
                _decisions(s.delay_p90, decisions),
                f"{s.oracle:.0f}",
                _ratio_to_oracle(s, decisions),
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
    console.console.print(f"{2 * seeds * len(MODES) * len(ratios)} runs in {elapsed:.1f} s")


def _ratio_to_oracle(summary: ModeSummary, decisions: int) -> str:
    """The median delay over the oracle's decisions, with the 95 % interval of the median (its Monte Carlo error)."""
    low, high = (f"> {decisions / summary.oracle:.2f}" if math.isinf(value) else f"{value:.2f}" for value in summary.delay_over_oracle_range)
    median = f"> {decisions / summary.oracle:.2f}" if math.isinf(summary.delay_over_oracle) else f"{summary.delay_over_oracle:.2f}"
    return f"{median} ({low}–{high})"


def _ratio(text: str) -> tuple[int, int]:
    """`1:4` → (1, 4): group sizes male : female."""
    male, _, female = text.partition(":")
    if not (male.isdigit() and female.isdigit() and int(male) > 0 and int(female) > 0):
        raise click.BadParameter(f"expected two positive whole numbers as M:F, such as 1:4; got {text!r}")
    return int(male), int(female)


def _decisions(value: float, decisions: int) -> str:
    """A delay in decisions; one beyond the stream (runs left undetected) as `> n`."""
    return f"> {decisions}" if math.isinf(value) else f"{value:g}"
