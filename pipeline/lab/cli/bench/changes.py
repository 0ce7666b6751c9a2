"""`fairstream bench changes`: change verdicts on simulated decisions beside a known-parameter oracle: false alarms on
streams that hold still, how many moves are found within 5,000 decisions and how soon, how near they are dated, what
the records' intervals cover, and the trials between false alarms."""

from __future__ import annotations

import math
from itertools import product

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.changes import oracle
from fairstream.lab.changes.near_oracle import CALIBRATION, NEAR, WITHIN, Comparison, compare, false_alarms, split
from fairstream.lab.changes.records import Coverage, coverage, patience, run_length

MOVES = (0.05, 0.1, 0.2)
SHARES = (0.5, 0.1)
CHANGES_AT = (2_000, 20_000)
COVERED_MOVES = (0.15, 0.3, 0.5)
RUN_LENGTH_ARL = 10_000
PATIENCE_GROUPS = 6
PATIENCE_ARL = 5_000


def _share(hits: int | float, runs: int) -> str:
    if not runs:
        return "–"
    low, high = Coverage.interval(round(hits), runs)
    return f"{hits / runs:.1%} [{low:.1%}, {high:.1%}]"


def _delay(delay: float) -> str:
    return f"{delay:,.0f}" if math.isfinite(delay) else "not found"


def _ratio(c: Comparison) -> str:
    ratio = c.ratio
    return f"{ratio:.2f}×" if math.isfinite(ratio) else "–"


@click.command()
@click.option("--runs", default=200, show_default=True, type=click.IntRange(10), help="Streams per move, group split and decision of the move.")
@click.option("--still-runs", default=1000, show_default=True, type=click.IntRange(10), help="Streams that hold still, per group split.")
@click.option("--arl", default=1e6, show_default=True, type=click.FloatRange(100), help="estimator.arl: trials before a false alarm, on average.")
@click.option("--shift", default=0.1, show_default=True, type=click.FloatRange(0, 1, min_open=True), help="estimator.shift: the scale of the changes sought.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@click.option("--calibration-streams", default=CALIBRATION, show_default=True, type=click.IntRange(100), help="Streams that hold still, per setting, that set the oracle's and the bound's thresholds.")
@click.option("--coverage-runs", default=300, show_default=True, type=click.IntRange(10), help="Streams per setting whose record intervals are checked.")
@click.option("--run-length-streams", default=20, show_default=True, type=click.IntRange(1), help="Stationary streams of 200,000 decisions per group split, every alarm counted (ARL 10,000).")
@click.option("--patience-streams", default=5, show_default=True, type=click.IntRange(1), help=f"Streams of {PATIENCE_GROUPS} groups whose every detector's false alarms are counted (ARL {PATIENCE_ARL:,}).")
@click.option("--patience-trials", default=100_000, show_default=True, type=click.IntRange(1000), help="Trials per such stream.")
@click.option("--figure", default=None, type=click.Path(dir_okay=False), help="Also draw one stream, where the change points fell and the delays beside the oracle's, to this PNG.")
@reports_errors
def changes(
    runs: int, still_runs: int, arl: float, shift: float, seed: int, calibration_streams: int, coverage_runs: int, run_length_streams: int, patience_streams: int, patience_trials: int,
    figure: str | None,
) -> None:
    """Two groups (1:1 or 1:9), a decision a minute, both approved half the time: streams whose gap holds at 0, and
    streams whose gap moves to 0.05, 0.1 or 0.2 at decision 2,000 or 20,000. The detector reads every decision as a
    monitor with `verdict: change` does; the oracle is a CUSUM on the same pairs that knows the gaps before and after,
    its threshold set for 1 % false alarms within 10,000 decisions; the bound knows the move and the spread but not the
    gap before, as no detector that holds its false alarms whatever the gap before can, its threshold set the same
    way."""
    settings = list(product(CHANGES_AT, MOVES, SHARES))
    with console.progress() as progress:
        task = progress.add_task("streams", total=len(SHARES) + len(settings) + len(COVERED_MOVES) * len(SHARES) + len(SHARES) + 1)
        still = []
        for share in SHARES:
            still.append((share, false_alarms(still_runs, share, shift=shift, arl=arl, seed=seed)))
            progress.advance(task)
        compared = []
        for change_at, gap, share in settings:
            compared.append(compare(runs, gap, share, change_at, shift=shift, arl=arl, seed=seed, calibration=calibration_streams))
            progress.advance(task)
        covered = []
        for gap, share in product(COVERED_MOVES, SHARES):
            covered.append(coverage(coverage_runs, gap, share, shift=shift, seed=seed))
            progress.advance(task)
        lengths = []
        for share in SHARES:
            lengths.append(run_length(run_length_streams, share, RUN_LENGTH_ARL, shift=shift, seed=seed))
            progress.advance(task)
        waited = patience(patience_streams, PATIENCE_GROUPS, PATIENCE_ARL, n=patience_trials, shift=shift, seed=seed)
        progress.advance(task)
    horizon = oracle.HORIZON
    console.table(
        f"Streams that hold still, {horizon:,} decisions ({still_runs:,} a split): any alarm (exact 95 % interval)",
        ["groups", "detector", "oracle", "target"],
        [(split(share), _share(alarms, still_runs), f"{oracle.FALSE_ALARMS:.0%} (set)", f"≤ {1 - math.exp(-horizon / arl):.1%} (1 − e^(−n/ARL))") for share, alarms in still],
        right=(1,),
    )
    for change_at in CHANGES_AT:
        console.table(
            f"Gaps that move from 0 at decision {change_at:,} (shift {shift}, ARL {arl:,.0f} trials; {runs:,} streams a row)",
            ["move", "groups", f"found within {WITHIN:,}", "oracle", "bound", "median delay", "oracle", "bound", "delay / oracle", f"dated within {NEAR}"],
            [
                (
                    f"{c.gap:g}", split(c.share), f"{c.found(c.detector):.1%}", f"{c.found(c.oracle):.1%}", f"{c.found(c.bound):.1%}",
                    _delay(c.median(c.detector)), _delay(c.median(c.oracle)), _delay(c.median(c.bound)), _ratio(c), f"{c.near:.1%}",
                )
                for c in compared if c.change_at == change_at
            ],
            right=tuple(range(2, 10)),
        )  # fmt: skip
    console.table(
        f"The records' 95 % intervals of the gap before and after, at the first alarm after the move ({coverage_runs:,} streams a setting)",
        ["move", "groups", "found", "before covered", "after covered"],
        [(f"0 → {c.gap:g}", split(c.share), f"{c.found:,}", _share(c.before, c.found), _share(c.after, c.found)) for c in covered],
        right=(2, 3, 4),
    )
    console.table(
        f"Trials between false alarms, restarts included (arl {RUN_LENGTH_ARL:,}; {run_length_streams} streams of 200,000 decisions)",
        ["groups", "alarms", "trials between alarms", "95 % interval"],
        [(split(r.share), f"{r.alarms:,}", f"{r.between:,.0f}", "[{:,.0f}, {:,.0f}]".format(*r.interval())) for r in lengths],
        right=(1, 2, 3),
    )
    pairs = PATIENCE_GROUPS * (PATIENCE_GROUPS - 1) // 2
    console.table(
        f"Every detector of a monitor of {PATIENCE_GROUPS} groups ({pairs} pairs) on streams that never move: false alarms per trial ({patience_streams} streams of {patience_trials:,} trials)",
        ["detectors", "alarms", "per 1,000 trials", "95 % interval", "bound: 1,000 / arl"],
        [(f"{pairs}", f"{waited.alarms:,}", f"{1000 * waited.per_trial:.3f}", "[{:.3f}, {:.3f}]".format(*(1000 * x for x in waited.interval())), f"{1000 / PATIENCE_ARL:.3f}")],
        right=(0, 1, 2, 3, 4),
    )
    if figure is not None:
        from fairstream.lab.changes.figure import write_change_figure

        shown = next(c for c in compared if (c.change_at, c.gap, c.share) == (CHANGES_AT[-1], 0.1, 0.5))
        console.console.print(f"wrote {write_change_figure(figure, compared, shown, shift=shift, arl=arl, seed=seed)}", markup=False)
