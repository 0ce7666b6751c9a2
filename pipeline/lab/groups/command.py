"""`fairstream bench group`: throughput with 1, 2, 3 members of a consumer group, and the pause of a rebalance."""

from __future__ import annotations

import uuid

import click

from fairstream.cli.console import console, reports_errors
from fairstream.cli.kafka_options import kafka_options
from fairstream.connectors.broker import kafka_or_local
from fairstream.lab.groups.bench import fill_topic, measure_members, measure_pauses


@click.command()
@kafka_options("Kafka to measure against (default: a local tansu broker started for the run).")
@click.option("--events", default=400_000, show_default=True, type=click.IntRange(1000), help="Events on the topic every member count reads to its end.")
@click.option("--members", default="1,2,3", show_default=True, help="Member counts to measure, comma-separated.")
@click.option("--partitions", default=6, show_default=True, type=click.IntRange(1), help="Partitions of the topic.")
@click.option("--rate", default=5_000, show_default=True, type=click.IntRange(1), help="Decisions a second fed while a member joins and leaves.")
@click.option("--window", default=10.0, show_default=True, type=click.FloatRange(2), help="Seconds watched after a join, after a leave, and with no change.")
@reports_errors
def group(bootstrap: str | None, kafka_config: str | None, events: int, members: str, partitions: int, rate: int, window: float) -> None:
    """Members of one consumer group over a keyed topic: events/s with each member count (against one member, in one
    run) and whether each wrote one member's records; then the pause a member joining and leaving costs."""
    counts = [int(count) for count in members.split(",")]
    tag = f"bench-group-{uuid.uuid4().hex[:6]}"
    with kafka_or_local(bootstrap, kafka_config) as kafka:
        written = fill_topic(kafka, f"{tag}-in", events, partitions)
        console.print(f"{written:,} events on {partitions} partitions; members read it to its end, each count a group of its own")
        runs = measure_members(kafka, f"{tag}-in", written, counts, tag)
        one = runs[0].rate
        console.print("members  events/s  against one  same records as one")
        for run in runs:
            console.print(f"{run.members:>7}  {run.rate:>8,.0f}  {run.rate / one:>10.2f}×  {'yes' if run.identical else 'NO'}")
        pauses = measure_pauses(kafka, f"{tag}-fed", rate, window, tag)
        console.print(
            f"longest time an input partition went without a step, in {pauses.window:.0f} s windows at {rate:,} decisions/s: "
            f"{pauses.quiet:.2f} s with no change, {pauses.joined:.2f} s after a member joined ({pauses.joined / pauses.quiet:.1f}×), "
            f"{pauses.left:.2f} s after one left ({pauses.left / pauses.quiet:.1f}×)",
            soft_wrap=True,
        )
