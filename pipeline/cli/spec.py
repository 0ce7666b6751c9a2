"""`fairstream spec check FILE…` and `fairstream spec schema`."""

from __future__ import annotations

import json
import sys

import click

from fairstream.cli import console
from fairstream.errors import SpecError
from fairstream.spec.load import load_plan
from fairstream.spec.models import Spec


@click.group()
def spec() -> None:
    """Check monitor specs and print their JSON Schema."""


@spec.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def check(files: tuple[str, ...]) -> None:
    """Validate spec files; report every problem with file, field path and reason."""
    failed = False
    for path in files:
        try:
            plan = load_plan(path)
        except SpecError as err:
            failed = True
            for line in str(err).splitlines():
                console.error(line)
            continue
        console.console.print(f"{path}: ok ({plan.spec.monitor}: {plan.spec.metric.type}, {len(plan.spec.variables)} variables)", soft_wrap=True)
    sys.exit(2 if failed else 0)


@spec.command()
def schema() -> None:
    """Print the JSON Schema of monitor specs."""
    click.echo(json.dumps(Spec.model_json_schema(), indent=2))
