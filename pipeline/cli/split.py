"""`fairstream split`: one input file into one file per partition, by the spec's dependence key."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.compiler.load import load_plan
from fairstream.connectors.files import csv_header
from fairstream.connectors.split import split_records
from fairstream.jobs import FORMATS
from fairstream.reading.parse import key_getter, key_name
from fairstream.runner import guess_format, records_of


@click.command()
@click.argument("spec")
@click.option("--input", "input_path", required=True, type=click.Path(dir_okay=False), help="The file to split (CSV, JSON lines, or the ProPublica COMPAS CSV).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Input file format; guessed from the file name when omitted.")
@click.option("--partitions", required=True, type=click.IntRange(1, 4096), help="Files to write: one per input partition.")
@click.option("--out", "out_dir", default="parts", show_default=True, type=click.Path(file_okay=False), help="Directory for part-000.jsonl (or .csv) …")
@reports_errors
def split(spec: str, input_path: str, fmt: str | None, partitions: int, out_dir: str) -> None:
    """Split an input file by SPEC's dependence key into --partitions files, each key's events in one file.

    Keys are placed by the spec's input.partitioner (murmur2 by default: where Kafka's default partitioner and
    `fairstream replay` put them on a topic of as many partitions), so `fairstream run SPEC --input 'OUT/part-*'`
    keeps each file's trials where the file is read. A CSV stays a CSV with the same header (none where the spec names its columns); the COMPAS file becomes
    JSON-lines events.
    """
    plan = load_plan(spec)
    schema = plan.spec.input
    form = fmt or guess_format(input_path)
    open_records = records_of(input_path, form, schema.columns)  # type: ignore[arg-type]
    columns = (schema.columns or csv_header(input_path)) if form == "csv" else None
    partitioner = "murmur2" if schema.partitioner == "none" else schema.partitioner
    written = split_records(
        open_records(), key_getter(schema.key), out_dir, partitions, partitioner=partitioner, columns=columns, header=schema.columns is None
    )
    total = sum(count for _, count in written)
    console.console.print(f"wrote {total:,} records into {partitions} files in {out_dir} by {key_name(schema.key)} ({partitioner})", soft_wrap=True)
    console.console.print(f"monitor them with: fairstream run {spec} --input '{out_dir}/part-*'", soft_wrap=True)
