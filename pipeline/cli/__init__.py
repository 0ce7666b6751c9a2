"""The `fairstream` command: registers one module per command."""

from __future__ import annotations

import click

from pipeline import __version__
from pipeline.cli import console
from pipeline.cli.alerts import alerts
from pipeline.cli.bench import bench
from pipeline.cli.demo import demo
from pipeline.cli.plot import plot
from pipeline.cli.replay import replay
from pipeline.cli.run import run
from pipeline.cli.shield import shield
from pipeline.cli.spec import spec
from pipeline.cli.synth import synth
from pipeline.cli.tune import tune


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="fairstream")
def cli() -> None:
    """Monitor algorithmic fairness over event streams."""


for command in (demo, run, replay, alerts, plot, spec, synth, bench, tune, shield):
    cli.add_command(command)


def main() -> None:
    console.show_warnings()
    cli(prog_name="fairstream")
