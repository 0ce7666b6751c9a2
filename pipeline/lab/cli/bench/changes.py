"""`fairstream bench changes`: change verdicts on simulated decisions: false alarms on streams that hold still,
detection, delay and dating of a gap that moves."""

from __future__ import annotations

import math

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.changes.streams import study


@click.command()
@click.option("--runs", default=500, show_default=True, type=click.IntRange(10), help="Simulated streams of each kind.")
@click.option("--decisions", "n", default=10_000, show_default=True, type=click.IntRange(1000), help="Decisions per stream.")
@click.option("--arl", default=1e6, show_default=True, type=click.FloatRange(100), help="estimator.arl: trials before a false alarm, on average.")
@click.option("--shift", default=0.1, show_default=True, type=click.FloatRange(0, 1, min_open=True), help="estimator.shift: the smallest change worth finding.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@click.option("--figure", default=None, type=click.Path(dir_okay=False), help="Also draw one stream and where the change points fell, to this PNG.")
@reports_errors
def changes(runs: int, n: int, arl: float, shift: float, seed: int, figure: str | None) -> None:
    """Two groups 1:1, a decision a minute: streams whose gap holds at 0, and streams whose gap moves from 0 to 0.15 at
    the middle decision; the change detector reads every decision as a monitor with `verdict: change` does."""
    change_at = n // 2
    measured = study(runs, n, change_at=change_at, shift=shift, arl=arl, seed=seed)
    implied = 1 - math.exp(-n / arl)
    delay = "–" if measured.median_delay is None else f"{measured.median_delay:,.0f}"
    console.table(
        f"Change verdicts, shift {shift}, ARL {arl:,.0f} trials: {runs:,} streams of {n:,} decisions of each kind",
        ["measure", "measured", "target"],
        [
            ["streams that hold still with any alarm", f"{measured.false_alarms:.1%}", f"≈ {implied:.1%} (1 − e^(−n/ARL))"],
            [f"moved at decision {change_at:,}: found by the end", f"{measured.found:.1%}", "≥ 90 %"],
            ["median delay (decisions)", delay, "≤ 2,000"],
            [f"change point within {measured.near} decisions", f"{measured.near_share:.1%}", "≥ 70 %"],
        ],
        right=(1,),
    )
    if figure is not None:
        from fairstream.lab.changes.figure import write_change_figure

        console.console.print(f"wrote {write_change_figure(figure, list(measured.change_points), n=n, change_at=change_at, shift=shift, arl=arl, seed=seed)}", markup=False)
