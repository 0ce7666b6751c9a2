"""`fairstream report DIR --out report.html`: the bias-audit report of a run, with its tables as CSV and JSON."""

from __future__ import annotations

from pathlib import Path

import click

from fairstream.audit.files import write_report
from fairstream.audit.report import SpecOf, audit_run
from fairstream.audit.sources import directory_records, topic_records
from fairstream.audit.tables import MIN_SHARE
from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import file_or_kafka, kafka_options
from fairstream.compiler.load import load_plans
from fairstream.compiler.plan import Plan
from fairstream.language.yaml_file import SPECS_DIR
from fairstream.records.chain import spec_hash
from fairstream.records.errors import InputError


def spec_finder(given: list[Plan]) -> SpecOf:
    """The spec whose sha256 the records name: one given with --spec, else the bundled spec file with that hash, which
    is loaded only once a monitor names it. Of a file with several metrics, the plan of the monitor's name."""
    known: dict[str, list[Plan]] = {}
    for plan in given:
        known.setdefault(plan.sha256, []).append(plan)
    bundled = {spec_hash(path.read_bytes()): path for path in sorted(SPECS_DIR.glob("*.yaml"))}

    def spec_of(digest: str, monitor: str) -> Plan | None:
        if digest not in known and digest in bundled:
            known[digest] = load_plans([str(bundled[digest])])
        plans = known.get(digest, [])
        return next((plan for plan in plans if plan.spec.monitor == monitor), plans[0] if plans else None)

    return spec_of


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@kafka_options("Kafka bootstrap servers, HOST:PORT: report on the job's --alerts topic and its .estimates and .dlq topics.")
@click.option("--alerts", default="fairness-alerts", show_default=True, help="With a Kafka: the job's alert topic.")
@click.option("--out", "out", default="report.html", show_default=True, type=click.Path(dir_okay=False), help="The HTML file to write; its tables go beside it as CSV and JSON (<name>_tables/).")
@click.option("--spec", "specs", multiple=True, help="The spec (file) the run used, to show its text; checked against the sha256 the records name. Bundled specs are found without it.")
@click.option("--min-share", default=MIN_SHARE, show_default=True, type=click.FloatRange(0, 1, max_open=True), help="Categories with a smaller share of a level's trials are listed but left out of the impact ratios.")
@reports_errors
def report(directory: str | None, bootstrap: str | None, kafka_config: str | None, alerts: str, out: str, specs: tuple[str, ...], min_share: float) -> None:
    """Write the bias-audit report of a run: per category n, rate, impact ratio and significance, the verdicts' timeline, the spec.

    Give the output DIRECTORY of `fairstream run --out DIR`, or a Kafka and the job's --alerts topic. The page is one
    self-contained HTML file (figures inline, nothing fetched); every table is also written as CSV and JSON.
    """
    kafka = file_or_kafka(directory, bootstrap, kafka_config, file_option="DIRECTORY")
    given_plans = [plan for name in specs for plan in load_plans([name])]
    run = audit_run(directory_records(directory) if kafka is None else topic_records(kafka, alerts), spec_finder(given_plans), min_share=min_share)  # type: ignore[arg-type]
    if not run.monitors:
        raise InputError(f"no estimates in {directory or alerts}: nothing to report on")
    for given in given_plans:
        if all(audit.plan is not given and audit.spec_sha256 != given.sha256 for audit in run.monitors):
            named = ", ".join(sorted({audit.spec_sha256[:12] + "…" for audit in run.monitors if audit.spec_sha256})) or "none"
            raise InputError(f"spec {given.spec.monitor} has sha256 {given.sha256[:12]}…, but the records name {named}: not the spec of this run")
    written = write_report(run, Path(out))
    for audit in run.monitors:
        shown = "" if audit.plan is not None else " (spec text not shown: give it with --spec)"
        console.console.print(f"{audit.monitor}: {len(audit.tables)} table(s), {len(audit.first_violations())} part(s) found in violation{shown}", soft_wrap=True)
    if run.chains.breaks:
        console.console.print(f"warning: the records' hash chain is broken: {run.chains.breaks[0]}", style="red", soft_wrap=True)
    console.console.print(f"wrote {out} and {len(written) - 1} table file(s) beside it", soft_wrap=True)
