"""`fairstream bench …`: benchmarks and studies that print ratios measured in one run."""

from __future__ import annotations

import click

from fairstream.cli.bench.database import database
from fairstream.cli.bench.detection import detection
from fairstream.cli.bench.evidence import evidence
from fairstream.cli.bench.guarantees import guarantees
from fairstream.cli.bench.hiring import hiring
from fairstream.cli.bench.kafka import kafka
from fairstream.cli.bench.means import means
from fairstream.cli.bench.scale import scale
from fairstream.cli.bench.shield import shield
from fairstream.cli.bench.throughput import throughput


@click.group()
def bench() -> None:
    """Measure throughput and detection behaviour."""


for command in (throughput, scale, kafka, database, hiring, detection, guarantees, evidence, means, shield):
    bench.add_command(command)
