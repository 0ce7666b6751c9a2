"""`fairstream shield compare`: every shield on classifier-recommended decision streams from COMPAS, Adult and German
Credit (needs the `studies` extra)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.figures.shield_comparison import write_comparison
from fairstream.lab.studies.shields import CLASSIFIERS, DATASETS, FAIRNESS, PERIOD, SHIELDS, Comparison, compare, summarize


class NameList(click.ParamType):
    """Comma-separated names among `known` (data sets, classifiers), in the order given."""

    name = "NAMES"

    def __init__(self, known: Sequence[str], noun: str):
        self.known = tuple(known)
        self.noun = noun

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, ...]:
        if isinstance(value, tuple):
            return value
        names = tuple(item.strip() for item in str(value).split(",") if item.strip())
        for name in names:
            if name not in self.known:
                self.fail(f"unknown {self.noun} {name!r}; known: {', '.join(self.known)}", param, ctx)
        return names


def _spread(value: tuple[float, float], repetitions: int, digits: int = 4) -> str:
    mean, sd = value
    return f"{mean:.{digits}f}" if repetitions == 1 else f"{mean:.{digits}f} ± {sd:.{digits}f}"


@click.command(name="compare")
@click.option("--datasets", "names", default=",".join(DATASETS), show_default=True, type=NameList(DATASETS, "data set"), help="Data sets to compare on.")
@click.option("--classifiers", default="logistic", show_default=True, type=NameList(CLASSIFIERS, "classifier"), help=f"Classifiers that recommend the decisions: {', '.join(CLASSIFIERS)}.")
@click.option("--fairness", default="demographic_parity", show_default=True, type=click.Choice(FAIRNESS), help="What the shields keep: the gap in acceptance rates, or in true-positive rates (labels revealed after each decision).")
@click.option("--decisions", default=3000, show_default=True, type=click.IntRange(3), help="Decisions sampled per data set.")
@click.option("--repetitions", default=1, show_default=True, type=click.IntRange(1), help="Runs per data set and classifier, seeds SEED, SEED+1, …: mean ± sd.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the split, the sampled stream and the flip draws (the first repetition's).")
@click.option(
    "--out", "out_dir", default="out/shields", show_default=True, type=click.Path(file_okay=False), help="Directory for comparison.png."
)
@reports_errors
def compare_command(names: tuple[str, ...], classifiers: tuple[str, ...], fairness: str, decisions: int, repetitions: int, seed: int, out_dir: str) -> None:
    """Run classifier-recommended decisions through every shield and report demographic parity, utility loss and how
    often fairness holds.

    Each data set is split in halves (seeded, stratified); the classifier is trained on one half and
    individuals are sampled from the other. The naive shield and the FinHzn-based Static-Fair and
    Dynamic (period 50) keep |r_a − r_b| ≤ κ = 0.1 (Static-BW: both rates within bounds of width κ around the
    proposed acceptance rate, in every period with enough members of both groups); the energy shields have S = [−κ, κ], L = [−κ/2, κ/2]
    (`energy` told the training half's raw gap, `energy-adaptive` estimating it from the stream).

    With --fairness equal_opportunity every shield keeps the gap in true-positive rates instead: each individual's
    true label is revealed after their decision, and only the qualified count (FinHzn over the qualified's counts for
    Static-Fair, Static-BW and Dynamic; the parity shields run on the qualified).
    """
    started = time.perf_counter()
    runs: dict[tuple[str, str], list[Comparison]] = {}
    with console.progress() as progress:
        task = progress.add_task("shielding", total=len(names) * len(classifiers) * repetitions * len(SHIELDS))
        for name in names:
            for classifier in classifiers:
                runs[(name, classifier)] = [
                    compare(name, decisions, seed + offset, on_shield=lambda: progress.advance(task), classifier=classifier, fairness=fairness)  # type: ignore[arg-type]
                    for offset in range(repetitions)
                ]
    elapsed = time.perf_counter() - started
    gap = "DP" if fairness == "demographic_parity" else "EO"
    for (name, classifier), comparisons in runs.items():
        first = comparisons[0]
        a, b = first.groups
        accuracy = sum(c.accuracy for c in comparisons) / repetitions
        gaps = sum(c.raw_gap for c in comparisons) / repetitions
        console.console.print(
            f"\n{name} ({a} vs {b}), {classifier}: {decisions} decisions × {repetitions} run(s), accuracy {accuracy:.3f}, raw gap p̄ = {gaps:+.4f}",
            soft_wrap=True,
        )
        summary = summarize(comparisons)
        console.table(
            f"{name}, {classifier}",
            ["shield", f"{gap} after {decisions // 3}", f"{gap} after {decisions}", "utility loss", "accuracy loss (pp)", f"{gap} ≤ κ at period ends", f"{gap} ≤ κ at the end"],
            [
                [
                    label,
                    _spread(summary[label].dp_third, repetitions),
                    _spread(summary[label].dp_end, repetitions),
                    _spread(summary[label].utility_loss, repetitions, 3),
                    _spread(summary[label].accuracy_loss, repetitions, 2),
                    f"{summary[label].satisfied_periods:.1%}",
                    f"{summary[label].satisfied_end:.0%}",
                ]
                for label in SHIELDS
            ],
            right=[1, 2, 3, 4, 5, 6],
        )
    png = write_comparison([comparisons[0] for (name, classifier), comparisons in runs.items() if classifier == classifiers[0]], Path(out_dir) / "comparison.png")
    meaning = "|r_a − r_b|" if gap == "DP" else "|TPR_a − TPR_b| over the individuals labelled 1"
    console.console.print(f"{gap} = {meaning}; utility loss = interventions per decision; accuracy loss = accuracy unshielded − shielded against the true labels; FinHzn period {PERIOD}", soft_wrap=True)
    console.console.print(f"wrote {png}", markup=False, soft_wrap=True)
    console.console.print(f"compared in {elapsed:.1f} s")
