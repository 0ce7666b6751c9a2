"""`fairstream replay SOURCE --bootstrap HOST:PORT --topic decisions`: put a file of events onto Kafka."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import kafka_options
from fairstream.compiler.load import load_plan
from fairstream.connectors.kafka_config import checked_connection
from fairstream.connectors.replay import EventFields
from fairstream.connectors.replay import replay as replay_records
from fairstream.jobs import FORMATS
from fairstream.records.events import Event, RawRecord
from fairstream.runner import guess_format, records_of


def typed_records(path: str, fmt: str, spec: str | None) -> tuple[list[Any] | Iterator[Any], EventFields]:
    """The records to send and where their key and time are; CSV cells are converted to the spec's types when a spec is given."""
    if spec is None:
        return records_of(path, fmt)(), EventFields()  # type: ignore[arg-type]
    plan = load_plan(spec)
    records = records_of(path, fmt, plan.spec.input.columns)()  # type: ignore[arg-type]
    key = plan.spec.input.key
    fields = EventFields(key if isinstance(key, str) else tuple(key), plan.spec.input.time, plan.spec.input.time_format)
    if fmt != "csv":
        return records, fields
    parser = plan.parser(strings=True)

    def converted() -> Iterator[Any]:
        for offset, row in enumerate(records):
            item = parser.parse(RawRecord(0, offset, row))
            yield item.fields if isinstance(item, Event) else row

    return converted(), fields


def count_records(path: str, fmt: str) -> int | None:
    if fmt == "compas":
        return None
    with Path(path).open("rb") as handle:
        if fmt == "csv":  # the header, and blank rows the CSV reader skips
            return sum(1 for line in handle if line.strip()) - 1
        return sum(1 for _ in handle)  # every line is a record, a blank one a dead letter


@click.command()
@click.argument("source", type=click.Path(dir_okay=False))
@kafka_options("Kafka bootstrap servers, HOST:PORT.")
@click.option("--topic", default="decisions", show_default=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Input format; guessed from the file name when omitted.")
@click.option("--spec", type=click.Path(dir_okay=False), help="Spec whose key and time fields (and CSV field types) to use; default key `id`, time `date`.")
@click.option("--partitions", default=1, show_default=True, type=click.IntRange(1), help="Partitions of the topic when it is created.")
@click.option("--speed", type=click.FloatRange(min=0, min_open=True), help="Event-time seconds per wall-clock second (e.g. 86400 = a day per second).")
@click.option("--as-fast-as-possible", "fast", is_flag=True, help="No pacing (the default when --speed is not given).")
@reports_errors
def replay(source: str, bootstrap: str | None, kafka_config: str | None, topic: str, fmt: str | None, spec: str | None, partitions: int, speed: float | None, fast: bool) -> None:
    """Produce the events of SOURCE to a Kafka topic, keyed by the dependence key, with event time as the Kafka timestamp."""
    kafka = checked_connection(bootstrap, kafka_config)
    fmt = fmt or guess_format(source)
    records, fields = typed_records(source, fmt, spec)
    if isinstance(records, list):
        total: int | None = len(records)
    else:
        total = count_records(source, fmt)
    with console.progress() as bar:
        task = bar.add_task(f"replaying to {topic}", total=total)
        result = replay_records(
            records,
            kafka,
            topic,
            fields=fields,
            partitions=partitions,
            speed=None if fast else speed,
            progress=lambda n: bar.update(task, advance=n),
        )
    console.console.print(
        f"replayed {result.sent:,} events to {topic!r} ({result.partitions} partition(s)) in {result.seconds:.1f} s: {result.rate:,.0f} msg/s",
        soft_wrap=True,
    )
