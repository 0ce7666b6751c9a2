"""`fairstream bench guarantees`: the verdicts' error rates in production conditions, by simulation, against their levels."""

from __future__ import annotations

import time

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.studies.guarantees import agreement_cases, anytime_cases, baseline_cases, confident_cases, family_cases


@click.command()
@click.option("--runs", default=1000, show_default=True, type=click.IntRange(10), help="Runs per condition (one look, budget, baseline).")
@click.option("--stream-runs", default=200, show_default=True, type=click.IntRange(1), help="Dataflow runs per condition of the anytime case.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@reports_errors
def guarantees(runs: int, stream_runs: int, seed: int) -> None:
    """Simulate streams with no violation in them (strong priors, unequal groups, outcome-dependent label delays,
    estimated baselines, five groups and two parts) and count how often each verdict claims one."""
    started = time.perf_counter()
    families = (
        ("confident", lambda: confident_cases(runs, seed)),
        ("budget", lambda: family_cases(runs, seed)),
        ("baseline", lambda: baseline_cases(runs, seed)),
        ("anytime", lambda: anytime_cases(stream_runs)),
        ("agreement", lambda: agreement_cases(stream_runs)),
    )
    cases = []
    with console.progress() as progress:
        task = progress.add_task("simulating", total=54 + 2 + 4 + 2 + 2)
        for _, make in families:
            for case in make():
                cases.append(case)
                progress.advance(task)
    console.table(
        "Error rates in production conditions (α = 0.05, δ = 0.1; ± one Monte Carlo standard error)",
        ["verdict", "condition", "runs", "false claims", "level", "holds"],
        [(c.family, c.condition, f"{c.runs:,}", f"{c.rate:.3f} ± {c.error:.3f}", f"{c.bound:g}", "yes" if c.holds else "NO") for c in cases],
        right=(2, 3, 4),
    )
    worst = max((c for c in cases if c.family.startswith("confident")), key=lambda c: c.rate)
    console.console.print(f"confident, worst condition: {worst.condition}: {worst.rate:.3f} ± {worst.error:.3f}", soft_wrap=True)
    console.console.print(f"{len(cases)} conditions in {time.perf_counter() - started:.1f} s; holds: within the level plus three standard errors")
