"""`fairstream bench assumptions`: how often the run's assumption checks warn on streams that keep the assumption, and
how soon on streams that break it."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.studies.assumption_checks import BREAK_AT, CASES, DECISIONS, LEVEL, check_cases


@contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    """The logger's warnings held back while the block runs, its level as it was after."""
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@click.command()
@click.option("--runs", default=200, show_default=True, type=click.IntRange(10), help="Seeded streams per setting.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@reports_errors
def assumptions(runs: int, seed: int) -> None:
    """Run the shield over streams that keep its assumptions and streams that stray from them, and count the warnings."""
    started = time.perf_counter()
    with console.progress() as progress, _quiet(logging.getLogger("fairstream.shield")):  # thousands of runs warn once each: the table counts them
        task = progress.add_task("simulating", total=len(CASES))
        cases = list(check_cases(runs, seed, lambda: progress.advance(task)))
    rows = []
    for case in cases:
        low, high = case.interval
        rows.append((
            case.check, case.stream, f"{case.runs:,}", f"{case.rate:.3f} [{low:.3f}, {high:.3f}]",
            "detection" if case.broken else f"≤ {LEVEL:g}", case.delay_text(), f"{case.early}" if case.broken else "—",
            "yes" if case.holds else "NO",
        ))  # fmt: skip
    console.table(
        f"Shield assumption checks: {DECISIONS:,} decisions a stream, breaks from decision {BREAK_AT} (95 % intervals)",
        ["assumption", "stream", "runs", "warned", "stated", "decisions to warn after the break", "warned before it", "holds"],
        rows,
        right=(2, 3, 5, 6),
    )
    console.console.print(f"{len(cases)} settings in {time.perf_counter() - started:.1f} s; holds: a clean stream's interval reaches the level, a broken one is found in ≥ 90 % of runs")
