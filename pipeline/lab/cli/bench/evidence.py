"""`fairstream bench evidence`: false alarms of point verdicts on fair groups per evidence floor, by simulation."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.studies.evidence import simulate_floors
from fairstream.language.metric import default_floor


@click.command()
@click.option(
    "--threshold", default=0.1, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True), help="ε: largest tolerated gap."
)
@click.option("--floors", default="1,10,30,50,100,200,400", show_default=True, help="Candidate floors (trials), comma-separated.")
@click.option("--runs", default=20_000, show_default=True, type=click.IntRange(100), help="Fair pairs simulated per floor and rate.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@reports_errors
def evidence(threshold: float, floors: str, runs: int, seed: int) -> None:
    """Simulate fair pairs of groups (equal true rates) and count how often a point verdict alarms when the smaller
    group reaches each candidate floor, and at some check while it grows to ten times the floor."""
    try:
        candidates = sorted({int(floor) for floor in floors.split(",")})
    except ValueError:
        raise click.BadParameter(f"expected whole numbers separated by commas; got {floors!r}", param_hint="--floors") from None
    default = default_floor(threshold)
    if default not in candidates:
        candidates = sorted({*candidates, default})
    results = simulate_floors(threshold, candidates, runs=runs, seed=seed)
    console.table(
        f"Fair pairs alarming under point verdicts at ε = {threshold} (plain rates, reference group 10× larger, {runs:,} pairs per rate)",
        ["floor (trials)", "first check: worst rate", "false alarms", "any check up to 10× the floor", "false alarms"],
        [
            (f"{r.floor}{' (default)' if r.floor == default else ''}", f"{r.worst_first[0]:g}", f"{r.worst_first[1]:.1%}", f"{r.worst_any[0]:g}", f"{r.worst_any[1]:.1%}")
            for r in results
        ],
        right=(1, 2, 3, 4),
    )
    chosen = next(r for r in results if r.floor == default)
    console.console.print(
        f"default floor at ε = {threshold}: {default} trials (⌈1/ε²⌉); a fair group alarms at its first check with probability "
        f"{chosen.worst_first[1]:.1%} at worst (p = {chosen.worst_first[0]}); checked until it has 10× as many trials, {chosen.worst_any[1]:.1%}",
        soft_wrap=True,
    )
