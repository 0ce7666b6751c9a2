"""`fairstream bench monitors`: many monitors over one read of the input against one monitor alone."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.bench.monitors import BASES, measure_monitors

TARGET = 3.0
"""The many monitors' run may take at most this many times one monitor's."""


@click.command()
@click.option("--events", default=1_000_000, show_default=True, type=click.IntRange(1), help="Events in the generated stream.")
@click.option("--monitors", default=50, show_default=True, type=click.IntRange(2), help="Monitors in the job.")
@click.option("--publish-every", default="30d", show_default=True, help="The cadence of the second pair of runs (publish.every).")
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1), help="Rounds of the four runs; medians are reported.")
@reports_errors
def monitors(events: int, monitors: int, publish_every: str, repeat: int) -> None:
    """Run one monitor and MONITORS monitors over the same generated COMPAS-shaped stream, each a whole `fairstream run`
    process, once writing an estimate at every evaluation and once with publish.every; print the ratios."""
    with console.progress() as progress:
        task = progress.add_task("starting", total=None)
        result = measure_monitors(
            events, monitors, publish_every=publish_every, repeat=repeat, on_step=lambda step: progress.update(task, description=step)
        )
    console.console.print(f"{events:,} COMPAS-shaped events; the monitors cycle through {', '.join(BASES)}, each with its own threshold")
    rows = []
    for cadence in (None, publish_every):
        ratios = result.ratios(cadence)
        spread = f" ({min(ratios):.2f}–{max(ratios):.2f})" if repeat > 1 else ""
        rows.append(
            (
                f"every {cadence}" if cadence else "every evaluation",
                f"{result.median(1, cadence):.2f} s",
                f"{result.median(monitors, cadence):.2f} s",
                f"{sorted(ratios)[len(ratios) // 2]:.2f}×{spread}",
            )
        )
    console.table(
        f"{monitors} monitors over one read against one monitor (target ≤ {TARGET:g}×)",
        ["estimates written", "one monitor", f"{monitors} monitors", "ratio"],
        rows,
        right=(1, 2, 3),
    )
