"""`fairstream bench alarms`: one alarm across many pairs, by simulation: twelve groups, 66 pairs, the merged alarm of a
monitor beside the first of its per-pair tests, with every pair within ε, one pair beyond it, and 36 beyond it."""

from __future__ import annotations

import math

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.alarms.many_pairs import ALPHA, BEYOND, EPSILON, GROUPS, PAIRS, drifting, median, risen, streams
from fairstream.lab.changes.records import Coverage

TITLES = {"one": f"one pair ε + {BEYOND:g} apart", "many": f"half the groups ε + {BEYOND:g} apart"}
TARGETS = {"one": "≤ 1.2×", "many": "≤ 0.5×"}


def _share(hits: int, runs: int) -> str:
    low, high = Coverage.interval(hits, runs)
    return f"{hits / runs:.1%} [{low:.1%}, {high:.1%}]"


def _decisions(value: float) -> str:
    return f"{value:,.0f}" if math.isfinite(value) else "not by the end"


@click.command()
@click.option("--runs", default=60, show_default=True, type=click.IntRange(2), help="Streams per scenario.")
@click.option("--still-decisions", default=20_000, show_default=True, type=click.IntRange(100), help="Decisions per stream with every pair within ε.")
@click.option("--one-decisions", default=150_000, show_default=True, type=click.IntRange(100), help="Decisions at most per stream with one pair beyond ε.")
@click.option("--many-decisions", default=60_000, show_default=True, type=click.IntRange(100), help="Decisions at most per stream with 36 pairs beyond ε.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@click.option("--figure", default=None, type=click.Path(dir_okay=False), help="Also draw the share of streams alarmed over the decisions, to this PNG.")
@reports_errors
def alarms(runs: int, still_decisions: int, one_decisions: int, many_decisions: int, seed: int, figure: str | None) -> None:
    """Twelve groups drawn evenly, a decision a minute, threshold ε = 0.1, α = 0.05: each pair's anytime test at
    α/66 (a side α/132) beside the monitor's merged alarm at α, fed the same outcomes."""
    decisions = {"still": still_decisions, "one": one_decisions, "many": many_decisions}
    measured = {}
    with console.progress() as progress:
        task = progress.add_task("streams", total=len(decisions))
        for scenario, most in decisions.items():
            measured[scenario] = streams(runs, scenario, most, seed)
            progress.advance(task)
    still = measured["still"]
    console.table(
        f"Every pair within ε ({len(GROUPS)} groups, half ε apart: 36 pairs at the threshold); {runs} streams of {still_decisions:,} decisions",
        ["alarm", "streams with an alarm", "level"],
        [
            ("any per-pair test", _share(risen([a.first_pair for a in still]), runs), f"≤ {ALPHA:g}"),
            ("merged alarm", _share(risen([a.merged for a in still]), runs), f"≤ {ALPHA:g}"),
        ],
        right=(1,),
    )
    rows = []
    for scenario in ("one", "many"):
        found = measured[scenario]
        first, merged = median([a.first_pair for a in found]), median([a.merged for a in found])
        ratio = merged / first if math.isfinite(first) and math.isfinite(merged) else math.nan
        rows.append((
            f"{TITLES[scenario]} ({drifting(scenario)} of {PAIRS} pairs)", f"{risen([a.first_pair for a in found])}/{runs}", _decisions(first),
            f"{risen([a.merged for a in found])}/{runs}", _decisions(merged), "–" if math.isnan(ratio) else f"{ratio:.2f}×", TARGETS[scenario],
        ))  # fmt: skip
    console.table(
        f"Pairs beyond ε = {EPSILON:g}: decisions to the first per-pair alarm and to the merged alarm ({runs} streams a row; medians)",
        ["drifting", "pair alarmed", "median", "merged alarmed", "median", "merged / first pair", "target"],
        rows,
        right=(1, 2, 3, 4, 5),
    )
    if figure is not None:
        from fairstream.lab.alarms.figure import write_alarm_figure

        drawn = {scenario: measured[scenario] for scenario in ("one", "many")}
        console.console.print(f"wrote {write_alarm_figure(figure, drawn, TITLES, decisions)}", markup=False)
