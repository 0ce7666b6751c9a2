"""`fairstream bench database`: the RTLola paper's Fig. 6 comparison, the seminar monitor against SQLite and DuckDB."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.bench.database import SizeResult, duckdb_available, measure_size
from fairstream.lab.cli.tune import NumberList

NAIVE = ("sqlite naive", "duckdb naive")
INCREMENTAL = ("sqlite incremental",)


def _cell(result: SizeResult, name: str) -> str:
    timing = result.baselines.get(name)
    if timing is None:
        return "–"
    agrees = "" if timing.agrees else " (verdicts differ!)"
    return f"{timing.seconds:.3g} s ({timing.seconds / result.stream_seconds:.2g}×){agrees}"


@click.command()
@click.option("--applicants", "sizes", default="100,1000,10000,100000", show_default=True, type=NumberList("at least 10", lambda n: n >= 10 and n == int(n)), help="Applicants per scenario, one row each.")
@click.option("--naive-up-to", default=10_000, show_default=True, type=click.IntRange(10), help="Largest scenario the quadratic baselines (a query over all events per evaluation) run on.")
@click.option("--seed", default=0, show_default=True, type=int, help="Scenario seed.")
@reports_errors
def database(sizes: tuple[float, ...], naive_up_to: int, seed: int) -> None:
    """Monitor one seminar scenario per size with specs/seminar_demographic_parity.yaml (a verdict per closed application),
    once writing an estimate at every close and once as a verdict stream (publish.every: 1000 closes), and answer the
    same question with SQLite and DuckDB: naively, a query over all events at every evaluation (the paper's baseline),
    and incrementally, per-gender counts updated at each close. Every baseline's verdicts are checked against the
    monitor's, and where they turn against the verdict stream's alerts; ratios are of the verdict stream's time."""
    backends = [name for name in (*NAIVE, *INCREMENTAL) if not name.startswith("duckdb") or duckdb_available()]
    results = []
    with console.progress() as progress:
        task = progress.add_task("scenarios", total=len(sizes))
        for size in sizes:
            chosen = [name for name in backends if name in INCREMENTAL or size <= naive_up_to]
            results.append(measure_size(int(size), chosen, seed=seed))
            progress.advance(task)
    columns = [name for name in (*NAIVE, *INCREMENTAL) if name in backends]
    console.table(
        "Seminar monitor, one verdict per closed application: seconds (× the verdict stream's time)",
        ["applicants", "events", "fairstream, estimate per close", "fairstream, verdict stream", *[f"{name.split()[0].replace('sqlite', 'SQLite').replace('duckdb', 'DuckDB')} {name.split()[1]}" for name in columns]],
        [(f"{r.applicants:,}", f"{r.events:,}", f"{r.monitor_seconds:.3g} s", f"{r.stream_seconds:.3g} s", *[_cell(r, name) for name in columns]) for r in results],
        right=range(len(columns) + 4),
    )
    if not duckdb_available():
        console.console.print("DuckDB is not installed: pip install duckdb (or the studies extra) adds its column")
    disagreeing = [f"{name} at {r.applicants:,}" for r in results for name, timing in r.baselines.items() if not timing.agrees]
    largest = max((r for r in results if "sqlite naive" in r.baselines), key=lambda r: r.applicants, default=None)
    biggest = max(results, key=lambda r: r.applicants)
    summary = (
        f"at {largest.applicants:,} applicants: SQLite naive {largest.baselines['sqlite naive'].seconds / largest.stream_seconds:.1f}× the verdict stream's time"
        if largest is not None
        else "no naive baseline ran"
    )
    summary += f"; at {biggest.applicants:,}: SQLite incremental {biggest.baselines['sqlite incremental'].seconds / biggest.stream_seconds:.2f}×"
    console.console.print(f"{summary}; verdicts identical to the monitor's: {'no: ' + ', '.join(disagreeing) if disagreeing else 'all'}", soft_wrap=True)
