"""`fairstream shield compare`: every shield on classifier-recommended decision streams from COMPAS, Adult and German
Credit (needs the `studies` extra)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from fairstream.cli import console
from fairstream.cli.errors import reports_errors
from fairstream.report.shield_comparison import write_comparison
from fairstream.studies.shields import DATASETS, PERIOD, SHIELDS, compare


class Names(click.ParamType):
    """Comma-separated data set names among `DATASETS`, in the order given."""

    name = "NAMES"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, ...]:
        if isinstance(value, tuple):
            return value
        names = tuple(item.strip() for item in str(value).split(",") if item.strip())
        for name in names:
            if name not in DATASETS:
                self.fail(f"unknown data set {name!r}; known: {', '.join(DATASETS)}", param, ctx)
        return names


@click.command(name="compare")
@click.option("--datasets", "names", default=",".join(DATASETS), show_default=True, type=Names(), help="Data sets to compare on.")
@click.option("--decisions", default=3000, show_default=True, type=click.IntRange(3), help="Decisions sampled per data set.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the split, the sampled stream and the flip draws.")
@click.option(
    "--out", "out_dir", default="out/shields", show_default=True, type=click.Path(file_okay=False), help="Directory for comparison.png."
)
@reports_errors
def compare_command(names: tuple[str, ...], decisions: int, seed: int, out_dir: str) -> None:
    """Run a logistic regression's recommended decisions through every shield and report demographic parity.

    Each data set is split in halves (seeded, stratified); the classifier is trained on one half and
    individuals are sampled from the other. The naive shield and the FinHzn-based Static-Fair and
    Dynamic (period 50) keep |r_a − r_b| ≤ κ = 0.1; the energy shield has S = [−κ, κ], L = [−κ/2, κ/2].
    """
    comparisons = []
    started = time.perf_counter()
    with console.progress() as progress:
        task = progress.add_task("shielding", total=len(names) * len(SHIELDS))
        for name in names:
            comparisons.append(compare(name, decisions, seed, on_shield=lambda: progress.advance(task)))
    elapsed = time.perf_counter() - started
    for comparison in comparisons:
        a, b = comparison.groups
        console.console.print(
            f"\n{comparison.name} ({a} vs {b}): {decisions} decisions, accuracy {comparison.accuracy:.3f}, raw gap p̄ = {comparison.raw_gap:+.4f}"
        )
        console.table(
            comparison.name,
            ["shield", f"DP after {decisions // 3}", f"DP after {decisions}", "interventions"],
            [[label, comparison.at_third(label), comparison.at_end(label), comparison.interventions[label]] for label in SHIELDS],
            right=[1, 2, 3],
        )
    png = write_comparison(comparisons, Path(out_dir) / "comparison.png")
    console.console.print(f"DP = |r_a − r_b|; FinHzn period {PERIOD}", soft_wrap=True)
    console.console.print(f"wrote {png}", markup=False, soft_wrap=True)
    console.console.print(f"compared in {elapsed:.1f} s")
