"""`fairstream bench hiring`: false alarms on fair and detection onset on unfair synthetic hiring streams."""

from __future__ import annotations

import time

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.studies.hiring import FAIR, UNFAIR, hiring_plan, run_study


@click.command()
@click.option("--seeds", default=100, show_default=True, type=click.IntRange(1), help="Seeds 0..S-1; each gives one fair and one unfair stream.")
@click.option("--n", "decisions", default=500, show_default=True, type=click.IntRange(1), help="Decisions per stream.")
@click.option("--confidence", default=24.0, show_default=True, type=click.FloatRange(0), help="κ: weight of the prior in pseudo-trials.")
@click.option("--threshold", default=0.1, show_default=True, type=click.FloatRange(0, 1, min_open=True), help="ε: largest tolerated gap in hire rate.")
@click.option("--prior", default=0.5, show_default=True, type=click.FloatRange(0, 1), help="Prior mean of each group's hire rate.")
@reports_errors
def hiring(seeds: int, decisions: int, confidence: float, threshold: float, prior: float) -> None:
    """Run the hiring monitor over seeded fair and unfair streams; report false alarms and when violations settle."""
    plan = hiring_plan(confidence=confidence, threshold=threshold, prior=prior)
    started = time.perf_counter()
    with console.progress() as progress:
        task = progress.add_task("monitoring", total=2 * seeds)
        study = run_study(plan, seeds, decisions, on_run=lambda _run: progress.advance(task))
    elapsed = time.perf_counter() - started
    s = study.summary
    fair, unfair = (f"{male}/{female}" for male, female in (FAIR, UNFAIR))
    console.console.print(f"{seeds} seeds × {decisions} decisions; prior {prior}, κ = {confidence:g}, ε = {threshold}")
    console.table(
        "Hiring demographic parity",
        ["measure", "value"],
        [
            (f"fair ({fair}) runs with any violation alert", f"{s.fair_triggered} / {seeds}"),
            (f"fair ({fair}) runs still violated at the end", f"{s.fair_ended_violated} / {seeds}"),
            (f"unfair ({unfair}) runs violated for good", f"{s.unfair_settled} / {seeds}"),
            ("  onset (decision): median", _decision(s.onset_median)),
            ("  onset: 10th percentile", _decision(s.onset_p10)),
            ("  onset: 90th percentile", _decision(s.onset_p90)),
            ("  onset: latest", _decision(s.onset_max)),
            ("  first violation alert: median", _decision(s.first_trigger_median)),
        ],
        right=(1,),
    )
    console.console.print(f"{2 * seeds} runs in {elapsed:.1f} s")


def _decision(value: float | None) -> str:
    return console.fmt(value) if value is None else f"{value:g}"
