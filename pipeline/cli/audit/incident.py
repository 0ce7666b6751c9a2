"""`fairstream incident DIR --alert ID --out FILE.zip`: one file a third party checks on its own."""

from __future__ import annotations

from pathlib import Path

import click

from fairstream.audit.incident import entries, select, spec_of, write_bundle
from fairstream.audit.sources import directory_records, topic_records
from fairstream.audit.verify import verify_chains
from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import file_or_kafka, kafka_options
from fairstream.paths import SPECS_DIR
from fairstream.records.errors import InputError


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--alert", "alert_id", required=True, help="The alert_id of the alert the bundle is about.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The zip to write.")
@click.option("--spec", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="The run's spec file (default: the bundled spec its records name by sha256).")
@kafka_options("Kafka bootstrap servers, HOST:PORT: read the job's --alerts topic and its .estimates and .seals topics.")
@click.option("--alerts", default="fairness-alerts", show_default=True, help="With a Kafka: the job's alert topic.")
@reports_errors
def incident(directory: str | None, alert_id: str, out: Path, spec: Path | None, bootstrap: str | None, kafka_config: str | None, alerts: str) -> None:
    """Bundle an alert with every record of its chain up to the seal that vouches for it, the spec, the figure and the
    versions into one zip that `fairstream verify` checks unpacked, with nothing else at hand.

    Give the output DIRECTORY of `fairstream run --out DIR`, or a Kafka and the job's --alerts topic. The run's records
    must verify first (a run that goes on is checked up to its last checkpoint)."""
    kafka = file_or_kafka(directory, bootstrap, kafka_config, file_option="DIRECTORY")
    records = list(directory_records(directory) if kafka is None else topic_records(kafka, alerts))  # type: ignore[arg-type]
    run_check = verify_chains(records, open_chains=True)
    if run_check.breaks:
        raise InputError(f"the run's records do not verify, so no bundle vouches for them: {run_check.breaks[0]}")
    found = select(records, alert_id)
    files = entries(found, spec_of(found, spec, SPECS_DIR), run_check)
    write_bundle(out, files)
    console.console.print(
        f"wrote {out}: alert {alert_id} and {len(found.records):,} record(s) of {found.alert['chain']['writer']} through seal "
        f"#{found.seal['chain']['seq']}, the spec, the figure, the versions ({len(files) + 1} files); check it with "
        "`fairstream verify` in the unpacked folder",
        soft_wrap=True,
    )

