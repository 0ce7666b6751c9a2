"""`fairstream bench …`: benchmarks and studies that print ratios measured in one run."""

from __future__ import annotations

import click

from fairstream.cli.bench_database import database
from fairstream.cli.bench_detection import detection
from fairstream.cli.bench_evidence import evidence
from fairstream.cli.bench_guarantees import guarantees
from fairstream.cli.bench_hiring import hiring
from fairstream.cli.bench_kafka import kafka
from fairstream.cli.bench_means import means
from fairstream.cli.bench_scale import scale
from fairstream.cli.bench_shield import shield
from fairstream.cli.bench_throughput import throughput


@click.group()
def bench() -> None:
    """Measure throughput and detection behaviour."""


for command in (throughput, scale, kafka, database, hiring, detection, guarantees, evidence, means, shield):
    bench.add_command(command)
