"""`fairstream run SPEC --input FILE`: monitor a file and print what was found."""

from __future__ import annotations

import time
from pathlib import Path

import click

from pipeline.cli import console
from pipeline.cli.errors import reports_errors
from pipeline.runner import FORMATS, run_file
from pipeline.verdicts.summary import dead_letter_counts, final_rates, first_violations


@click.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--input", "input_path", required=True, type=click.Path(dir_okay=False), help="CSV or JSON-lines file of events, or the ProPublica COMPAS CSV.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Input format; guessed from the file name when omitted.")
@click.option("--out", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="Directory for alerts.jsonl, estimates.jsonl, dead_letters.jsonl.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1), help="Worker threads per process.")
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1), help="Cooperating worker processes.")
@reports_errors
def run(spec: str, input_path: str, fmt: str | None, out_dir: str, workers: int, processes: int) -> None:
    """Monitor SPEC over an input file; write trigger events and estimates to --out."""
    started = time.perf_counter()
    result = run_file(spec, input_path, out_dir, fmt=fmt, workers=workers, processes=processes)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    estimates = result.read("estimates.jsonl")
    alerts = result.read("alerts.jsonl")
    dead = dead_letter_counts(result.read("dead_letters.jsonl"))

    rows = final_rates(estimates)
    if rows:
        last = estimates[-1]
        console.table(
            f"Final estimates at {last['event_time']} (prior {last['prior']}, κ = {last['confidence']})",
            ["part", "group", "estimate", "hits", "trials"],
            [(r.part, r.group, r.estimate, r.hits, r.trials) for r in rows],
            right=(2, 3, 4),
        )
        console.console.print(f"closed trials: {last['trials']['closed']}, incomplete: {last['trials']['incomplete']}")
    else:
        console.console.print("no trial closed: nothing to estimate")

    violations = first_violations(estimates)
    if violations:
        console.table(
            "First violation per part and pair of groups",
            ["part", "higher", "lower", "first violated", "gap then"],
            [(v.part, v.high, v.low, v.event_time[:10], v.gap) for v in violations],
            right=(4,),
        )
    turned = [a for a in alerts if a["type"] == "fairness.violation"]
    console.console.print(
        f"alerts: {len(turned)} violation(s), {len(alerts) - len(turned)} recovery(ies); "
        f"dead letters: {sum(dead.values())}" + (f" ({', '.join(f'{k}: {v}' for k, v in dead.items())})" if dead else "")
    )
    console.console.print(f"wrote {Path(out_dir) / 'alerts.jsonl'}, estimates.jsonl, dead_letters.jsonl in {elapsed:.1f} s")
