"""`fairstream verify DIR`: walk the hash chains of a run's records and name the first broken link."""

from __future__ import annotations

from pathlib import Path

import click

from fairstream.audit.incident import bundle_breaks, bundle_check, read_manifest
from fairstream.audit.sources import directory_records, topic_records
from fairstream.audit.verify import verify_chains
from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import file_or_kafka, kafka_options
from fairstream.records.errors import FairstreamError
from fairstream.records.signing import load_public_key


class BrokenChain(FairstreamError):
    """A record was changed, removed, reordered or added after it was written."""


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@kafka_options("Kafka bootstrap servers, HOST:PORT: verify the job's --alerts topic and its .estimates and .dlq topics.")
@click.option("--alerts", default="fairness-alerts", show_default=True, help="With a Kafka: the job's alert topic.")
@click.option("--public-key", type=click.Path(dir_okay=False), help="The Ed25519 public key (PEM) of the run's --signing-key: every record must carry its signature.")
@click.option("--open", "open_chains", is_flag=True, help="The run goes on: a chain without its closing seal is checked up to its last checkpoint, not a break.")
@reports_errors
def verify(directory: str | None, bootstrap: str | None, kafka_config: str | None, alerts: str, public_key: str | None, open_chains: bool) -> None:
    """Check that no record of a run was changed after it was written.

    Give the output DIRECTORY of `fairstream run --out DIR`, or a Kafka and the job's --alerts topic. Exit 0 with the
    number of records checked; exit 1 naming the first broken link (a changed, missing, reordered, misplaced or foreign
    record, a record naming a key twice, a chain cut from its end). Records written twice (a resumed run, at-least-once
    delivery) are duplicates, not breaks. An unpacked incident bundle (`fairstream incident`) is checked against its
    manifest too: its chain ends at the seal it names, and its files and spec are those it was made with.
    """
    kafka = file_or_kafka(directory, bootstrap, kafka_config, file_option="DIRECTORY")
    key = load_public_key(public_key) if public_key is not None else None
    manifest = read_manifest(Path(directory)) if kafka is None else None  # type: ignore[arg-type]
    if manifest is None:
        check = verify_chains(directory_records(directory) if kafka is None else topic_records(kafka, alerts), key, open_chains=open_chains)  # type: ignore[arg-type]
    else:
        records = list(directory_records(directory))  # type: ignore[arg-type]
        check = verify_chains(records, key, cut={manifest.writer: manifest.cut_seq})
        check.breaks += bundle_breaks(Path(directory), manifest, records)  # type: ignore[arg-type]
    if check.breaks:
        more = f" ({len(check.breaks) - 1} more break(s) after it)" if len(check.breaks) > 1 else ""
        raise BrokenChain(f"{check.breaks[0]}{more}")
    if not check.checked:
        raise BrokenChain("no record to verify")
    console.console.print(check.summary() + ("; every one signed by the given key" if key is not None else ""), soft_wrap=True)
    if manifest is not None:
        console.console.print(bundle_check(manifest), soft_wrap=True)
