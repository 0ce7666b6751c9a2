"""`fairstream spec check FILE…` and `fairstream spec schema`."""

from __future__ import annotations

import json
import sys

import click

from fairstream.cli import console
from fairstream.compiler.load import load_file_plans
from fairstream.language.guarantees import guarantee, warnings
from fairstream.language.models import MetricEntry, Spec
from fairstream.records.errors import SpecError


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
            plans = load_file_plans(path)
        except SpecError as err:
            failed = True
            for line in str(err).splitlines():
                console.error(line)
            continue
        monitors = ", ".join(f"{plan.spec.monitor}: {plan.spec.metric.type}" for plan in plans)
        console.console.print(f"{path}: ok ({monitors}, {len(plans[0].spec.variables)} variables)", soft_wrap=True)
        for plan in plans:
            console.console.print(f"  {plan.spec.monitor}: {guarantee(plan.spec, proxied=plan.monitor.proxy is not None)}", soft_wrap=True)
            for warning in warnings(plan.spec, proxied=plan.monitor.proxy is not None):
                console.console.print(f"  warning: {warning}", soft_wrap=True)
    sys.exit(2 if failed else 0)


@spec.command()
def schema() -> None:
    """Print the JSON Schema of monitor specs."""
    click.echo(json.dumps(file_schema(), indent=2))


def file_schema() -> dict:
    """The JSON Schema of a spec file: a monitor's, where `metric` may give way to `metrics`, a list of named metrics
    each with its own estimator."""
    schema = Spec.model_json_schema()
    entry = MetricEntry.model_json_schema()
    schema.setdefault("$defs", {}).update(entry.pop("$defs", {}))
    schema["$defs"]["MetricEntry"] = entry
    schema["properties"]["metrics"] = {"type": "array", "items": {"$ref": "#/$defs/MetricEntry"}, "minItems": 1, "description": "several properties of one spec, each its own monitor <monitor>.<name>"}
    schema["required"] = [name for name in schema.get("required", []) if name != "metric"]
    schema["oneOf"] = [{"required": ["metric"]}, {"required": ["metrics"]}]
    return schema
