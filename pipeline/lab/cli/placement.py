"""`fairstream bench placement`: how many decisions the shield flips beside the fewest that reach the same end, with
groups of uneven size, and the stated bound rechecked on the same streams."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.placement.runs import SETTINGS, measure

TARGETS = {SETTINGS[0].name: "≤ 2×", SETTINGS[2].name: "≤ 1.2×"}


@click.command()
@click.option("--runs", default=400, show_default=True, type=click.IntRange(10), help="Streams per setting.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the streams.")
@reports_errors
def placement(runs: int, seed: int) -> None:
    """Streams of 2,000 decisions through the runtime shield synthesized for each setting (λ = 0.05 over decisions
    500–2,000): two groups at shares 0.1/0.9 and 0.5/0.5 (rates 0.6/0.3, S ±0.1, L ±0.05), three at shares
    0.5/0.3/0.2 (rates 0.9/0.5/0.1, S [0, 0.3], L [0, 0.15]). The oracle knows each whole stream and flips the fewest
    raw decisions that bring the groups' rates within the shielded end spread."""
    measured = []
    with console.progress() as progress:
        task = progress.add_task("settings", total=len(SETTINGS))
        for setting in SETTINGS:
            measured.append(measure(setting, runs, seed))
            progress.advance(task)
    console.table(
        f"Flips against the hindsight oracle's fewest, and the bound rechecked ({runs:,} streams a setting)",
        ["setting", "member α", "flips a stream", "oracle", "flips / oracle", "target", "left S", "λ"],
        [
            (
                found.setting.name, f"{found.alpha:.3f}", f"{sum(found.flips) / runs:,.1f}", f"{sum(found.fewest) / runs:,.1f}", f"{found.ratio:.2f}×",
                TARGETS.get(found.setting.name, "—"), "{:.3f} [{:.3f}, {:.3f}]".format(found.left_share[0], *found.left_share[1]), f"{found.setting.lam:g}",
            )
            for found in measured
        ],
        right=(1, 2, 3, 4, 6, 7),
    )  # fmt: skip
