"""`fairstream bench changes`: change verdicts on simulated decisions: false alarms on streams that hold still,
detection, delay and dating of a gap that moves."""

from __future__ import annotations

import math
from itertools import product

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.changes.records import Coverage, coverage, run_length
from fairstream.lab.changes.streams import study

MOVES = (0.15, 0.3, 0.5)
SHARES = (0.5, 0.1)
RUN_LENGTH_ARL = 10_000


def _split(share: float) -> str:
    return f"{round(share * 10)}:{round((1 - share) * 10)}"


def _covered(hits: int, runs: int) -> str:
    if not runs:
        return "–"
    low, high = Coverage.interval(hits, runs)
    return f"{hits / runs:.1%} [{low:.1%}, {high:.1%}]"


@click.command()
@click.option("--runs", default=500, show_default=True, type=click.IntRange(10), help="Simulated streams of each kind.")
@click.option("--decisions", "n", default=10_000, show_default=True, type=click.IntRange(1000), help="Decisions per stream.")
@click.option("--arl", default=1e6, show_default=True, type=click.FloatRange(100), help="estimator.arl: trials before a false alarm, on average.")
@click.option("--shift", default=0.1, show_default=True, type=click.FloatRange(0, 1, min_open=True), help="estimator.shift: the smallest change worth finding.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@click.option("--coverage-runs", default=300, show_default=True, type=click.IntRange(10), help="Streams per setting whose record intervals are checked.")
@click.option("--run-length-streams", default=20, show_default=True, type=click.IntRange(1), help="Stationary streams of 200,000 decisions per group split, every alarm counted (ARL 10,000).")
@click.option("--figure", default=None, type=click.Path(dir_okay=False), help="Also draw one stream and where the change points fell, to this PNG.")
@reports_errors
def changes(runs: int, n: int, arl: float, shift: float, seed: int, coverage_runs: int, run_length_streams: int, figure: str | None) -> None:
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
    with console.progress() as progress:
        task = progress.add_task("records", total=len(MOVES) * len(SHARES) + len(SHARES))
        covered = []
        for gap, share in product(MOVES, SHARES):
            covered.append(coverage(coverage_runs, gap, share, shift=shift, seed=seed))
            progress.advance(task)
        lengths = []
        for share in SHARES:
            lengths.append(run_length(run_length_streams, share, RUN_LENGTH_ARL, shift=shift, seed=seed))
            progress.advance(task)
    console.table(
        f"The records' 95 % intervals of the gap before and after, at the first alarm after the move ({coverage_runs:,} streams a setting)",
        ["move", "groups", "found", "before covered", "after covered"],
        [(f"0 → {c.gap:g}", _split(c.share), f"{c.found:,}", _covered(c.before, c.found), _covered(c.after, c.found)) for c in covered],
        right=(2, 3, 4),
    )
    console.table(
        f"Trials between false alarms, restarts included (arl {RUN_LENGTH_ARL:,}; {run_length_streams} streams of 200,000 decisions)",
        ["groups", "alarms", "trials between alarms", "95 % interval"],
        [(_split(r.share), f"{r.alarms:,}", f"{r.between:,.0f}", "[{:,.0f}, {:,.0f}]".format(*r.interval())) for r in lengths],
        right=(1, 2, 3),
    )
    if figure is not None:
        from fairstream.lab.changes.figure import write_change_figure

        console.console.print(f"wrote {write_change_figure(figure, list(measured.change_points), n=n, change_at=change_at, shift=shift, arl=arl, seed=seed)}", markup=False)
