"""`fairstream bench scale`: events/s of 1, 2, … processes on the same keyed input, files and Kafka."""

from __future__ import annotations

import os

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import kafka_options
from fairstream.lab.bench.scale import measure_scale, per_day


def default_counts() -> str:
    """1, 2, 4, … up to this machine's cores."""
    cores, counts = os.cpu_count() or 1, [1]
    while counts[-1] * 2 <= cores:
        counts.append(counts[-1] * 2)
    if counts[-1] != cores:
        counts.append(cores)
    return ",".join(map(str, counts))


def process_counts(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in value.split(","))
    except ValueError:
        raise click.BadParameter(f"a comma-separated list of process counts, like 1,2,4; got {value!r}") from None
    if not counts or min(counts) < 1:
        raise click.BadParameter(f"process counts are at least 1; got {value!r}")
    return counts


@click.command()
@click.option("--events", default=1_000_000, show_default=True, type=click.IntRange(1), help="Events in the generated stream.")
@click.option("--partitions", type=click.IntRange(1, 4096), help="Input partitions (files, and topic partitions); default: the largest process count.")
@click.option("--processes", default=default_counts(), show_default=True, callback=process_counts, help="Process counts to run, comma-separated (1 is always run: the baseline).")
@click.option("--kafka/--no-kafka", default=True, show_default=True, help="Also run on a Kafka topic keyed by id (a local broker unless one is given).")
@kafka_options("Kafka bootstrap servers, HOST:PORT (default: a local broker started for the run).")
@reports_errors
def scale(events: int, partitions: int | None, processes: tuple[int, ...], kafka: bool, bootstrap: str | None, kafka_config: str | None) -> None:
    """Monitor the same keyed input with each number of processes, each in fresh processes; print events/s, speedup
    against one process, cores busy, and whether the outputs were identical."""
    partitions = partitions or max(processes)
    with console.progress() as progress:
        task = progress.add_task("starting", total=None)
        result = measure_scale(
            events, partitions, processes, kafka=kafka, bootstrap=bootstrap, kafka_config=kafka_config,
            on_step=lambda step: progress.update(task, description=step),
        )  # fmt: skip
    console.console.print(
        f"{result.events:,} COMPAS-shaped events ({per_day(result.events):g} screenings a day), keyed by id into {result.partitions} partitions, "
        f"on {os.cpu_count()} CPU cores; one worker per process; time from the last process reading to the last done",
        soft_wrap=True,
    )
    console.table(
        "Scale-out",
        ["input", "processes", "seconds", "events/s", "speedup", "cores busy", "outputs identical"],
        [
            (run.path, str(run.processes), f"{run.seconds:.2f}", f"{run.rate:,.0f}", f"{result.speedup(run):.2f}", f"{run.cores_busy:.1f}", "yes" if run.identical else "NO")
            for run in result.runs
        ],
        right=(1, 2, 3, 4, 5),
    )
    largest = max(run.processes for run in result.runs)
    speedups = result.at_most()
    paths = ", ".join(f"{speedups[path]:.2f} ({path})" for path in ("files", "kafka") if path in speedups)
    console.console.print(f"speedup at {largest} processes: {paths}")
