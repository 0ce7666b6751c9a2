"""`fairstream bench …`: benchmarks and studies that print ratios measured in one run."""

from __future__ import annotations

import click

from fairstream.lab.cli.alarms import alarms
from fairstream.lab.cli.bench.assumptions import assumptions
from fairstream.lab.cli.bench.changes import changes
from fairstream.lab.cli.bench.database import database
from fairstream.lab.cli.bench.detection import detection
from fairstream.lab.cli.bench.evidence import evidence
from fairstream.lab.cli.bench.guarantees import guarantees
from fairstream.lab.cli.bench.hiring import hiring
from fairstream.lab.cli.bench.kafka import kafka
from fairstream.lab.cli.bench.means import means
from fairstream.lab.cli.bench.monitors import monitors
from fairstream.lab.cli.bench.proxies import proxies
from fairstream.lab.cli.bench.scale import scale
from fairstream.lab.cli.bench.shield import shield
from fairstream.lab.cli.bench.throughput import throughput
from fairstream.lab.cli.placement import placement
from fairstream.lab.groups.command import group


@click.group()
def bench() -> None:
    """Measure throughput and detection behaviour."""


for command in (throughput, scale, kafka, group, database, monitors, hiring, detection, guarantees, evidence, means, proxies, changes, alarms, shield, assumptions, placement):
    bench.add_command(command)
