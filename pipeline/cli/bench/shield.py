"""`fairstream bench shield`: per-decision cost of the shield step, and synthesis time against the horizon."""

from __future__ import annotations

import click

from fairstream.bench.shield import measure_shield
from fairstream.cli import console
from fairstream.cli.console import reports_errors


@click.command()
@click.option("--decisions", default=200_000, show_default=True, type=click.IntRange(1000), help="Decisions through each flow.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1), help="Runs of each flow; medians are reported.")
@reports_errors
def shield(decisions: int, repeat: int) -> None:
    """Shield step vs passthrough (same source and parsing) in one run, and synthesis time vs T."""
    with console.progress() as bar:
        task = bar.add_task("starting", total=None)
        result = measure_shield(decisions, repeat, on_step=lambda step: bar.update(task, description=step))
    console.table(
        f"Shield step, {result.decisions:,} hiring decisions (median of {repeat})",
        ["flow", "seconds", "decisions/s"],
        [
            ("passthrough (read, parse)", result.passthrough_seconds, f"{result.decisions / result.passthrough_seconds:,.0f}"),
            ("shield (read, parse, order, shield, records)", result.shield_seconds, f"{result.decisions / result.shield_seconds:,.0f}"),
        ],
        right=(1, 2),
    )
    console.console.print(f"overhead: {result.overhead_us:.1f} µs per decision; shield / passthrough rate: {result.ratio:.2f}")
    console.table(
        "Synthesis time (p 0.3, S [0.4, 0.6], L [0.45, 0.55], λ 0.05)",
        ["horizon T", "seconds"],
        [(horizon, seconds) for horizon, seconds in result.synthesis_seconds.items()],
        right=(0, 1),
    )
