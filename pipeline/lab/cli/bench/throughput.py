"""`fairstream bench throughput`: the monitor's events/s against its own read+parse ceiling, on a generated COMPAS-shaped stream."""

from __future__ import annotations

import os
import statistics

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.bench.throughput import PER_DAY, measure_throughput
from fairstream.trials.bucket import PackedTrials
from fairstream.trials.folds import COMPILED


@click.command()
@click.option("--events", default=1_000_000, show_default=True, type=click.IntRange(1), help="Events in the generated stream.")
@click.option("--repeat", default=5, show_default=True, type=click.IntRange(1), help="Rounds: each runs the three flows back to back and gives one ratio of each kind; medians are reported.")
@click.option("--keep", type=click.Path(dir_okay=False), help="Write the generated stream to this file and keep it.")
@reports_errors
def throughput(events: int, repeat: int, keep: str | None) -> None:
    """Time the passthrough (read + parse), the full monitor and a hand-written loop of the same computation on the same stream, each in a fresh process; and whole processes, start to exit: `fairstream run` against the hand loop run as a script."""
    with console.progress() as progress:
        task = progress.add_task("starting", total=None)
        result = measure_throughput(events, repeat=repeat, keep=keep, on_step=lambda step: progress.update(task, description=step))
    console.console.print(
        f"{result.events:,} COMPAS-shaped events ({PER_DAY:g} screenings a day) on {os.cpu_count()} CPU cores; "
        f"{repeat} round(s) of the three flows, each in a fresh process, timing run_main (or the loop) only"
    )
    console.console.print(
        f"trial folds: {'compiled' if COMPILED else 'interpreted'}; open trials: {'native table' if PackedTrials else 'dicts'}"
        + ("" if COMPILED and PackedTrials else " (installed without a C compiler)")
    )
    console.table(
        "Throughput",
        ["flow", "seconds", "events/s", "slowest–fastest", "RSS MiB: imports → peak"],
        [
            (
                flow.flow,
                f"{flow.seconds:.2f}",
                f"{flow.rate:,.0f}",
                "–".join(f"{rate:,.0f}" for rate in flow.rate_range),
                f"{flow.start_rss_mib:.0f} → {flow.peak_rss_mib:.0f}",
            )
            for flow in (result.passthrough, result.monitor, result.hand)
        ],
        right=(1, 2, 3, 4),
    )
    for name, ratio, ratios, target in (
        ("passthrough", result.ratio, result.ratios, 0.8),
        ("hand-written loop", result.hand_ratio, result.hand_ratios, 1.0),
    ):
        rounds = f"median of {repeat} rounds, {min(ratios):.2f}–{max(ratios):.2f}; " if repeat > 1 else ""
        console.console.print(f"monitor / {name}: {ratio:.2f} ({rounds}target ≥ {target:.2f})")
    whole = result.whole_ratios
    console.console.print(
        f"whole processes, start to exit: fairstream run {statistics.median(result.whole_run):.2f} s, hand loop {statistics.median(result.whole_hand):.2f} s: "
        f"run {result.whole_ratio:.2f}× as fast ({f'median of {repeat} rounds, {min(whole):.2f}–{max(whole):.2f}; ' if repeat > 1 else ''}target ≥ 2.00)"
    )
    difference = result.gap_difference
    console.console.print(
        f"hand loop's daily gaps equal the monitor's: {'yes' if difference is not None and difference < 1e-12 else 'NO'}"
        + (f" (largest difference {difference:.1e} over {len(result.hand.runs[-1].gaps):,} days)" if difference is not None else " (different days evaluated)")
    )
    console.console.print(
        f"monitor output: {result.alerts} alert(s), {result.estimates:,} estimate records, {result.trials_closed:,} trials closed"
    )
    if keep is not None:
        console.console.print(f"kept the stream in {keep}")
