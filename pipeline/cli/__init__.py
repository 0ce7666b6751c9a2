"""The `fairstream` command: one module per command, imported only when that command runs, so `--help` is instant."""

from __future__ import annotations

import sys

import click

from fairstream import __version__
from fairstream.cli import console
from fairstream.cli.lazy import LazyGroup

COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("fairstream.cli.demo:demo", "Replay COMPAS into Kafka, monitor it for equalized odds, and print the alerts from the alert topic."),
    "run": ("fairstream.cli.run:run", "Monitor SPEC over an input file (--input) or a Kafka topic (--bootstrap)."),
    "replay": ("fairstream.cli.replay:replay", "Produce the events of SOURCE to a Kafka topic, keyed by the dependence key, with event time as the Kafka timestamp."),
    "alerts": ("fairstream.cli.alerts:alerts", "Print fairness alerts from the alert topic, each alert id once."),
    "dashboard": ("fairstream.cli.dashboard:dashboard", "Serve a live web page of a run's estimates, alerts, shield and health, from its output DIR or its Kafka topics."),
    "plot": ("fairstream.cli.plot:plot", "Draw per-group estimates and the gap between groups over event time from the output DIR of `fairstream run`."),
    "report": ("fairstream.cli.audit.report:report", "Write the bias-audit report of a run: per category n, rate, impact ratio and significance, the verdicts' timeline, the spec."),
    "verify": ("fairstream.cli.audit.verify:verify", "Check that no record of a run was changed after it was written (its hash chains)."),
    "incident": ("fairstream.cli.audit.incident:incident", "Bundle an alert with its chained records, the spec, the figure and the versions into one zip that `verify` checks."),
    "spec": ("fairstream.cli.spec:spec", "Check monitor specs and print their JSON Schema."),
    "split": ("fairstream.cli.split:split", "Split an input file by SPEC's dependence key into one file per input partition."),
    "synth": ("fairstream.cli.synth:synth", "Generate synthetic decision streams."),
    "data": ("fairstream.cli.data:data", "Fetch the reference data sets (COMPAS, Adult, German Credit) into a cache, checked by sha256."),
    "shield": ("fairstream.cli.shield:shield", "Runtime fairness shields: synthesize energy functions, simulate them, compare shields on real data."),
    "bench": ("fairstream.lab.cli.bench:bench", "Measure throughput and detection behaviour."),
    "tune": ("fairstream.lab.cli.tune:tune", "Count how often the seminar monitor triggers on FCFS, Randomize, Qualification and EqualGender assignments, per κ and ε."),
}
"""Command name → (module:attribute, the one-line help `fairstream --help` shows without importing the module)."""


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="fairstream")
@click.option("-v", "--verbose", is_flag=True, help="Also show the Kafka client library's log lines (librdkafka) as warnings.")
def cli(verbose: bool) -> None:
    """Monitor algorithmic fairness over event streams."""
    console.show_warnings(verbose)


@cli.command("worker")
@click.argument("job_json")
@click.argument("addresses")
@click.argument("index", type=int)
@click.argument("workers", type=int)
@click.argument("tally_path", required=False, type=click.Path(dir_okay=False))
@console.reports_errors
def worker(job_json: str, addresses: str, index: int, workers: int, tally_path: str | None) -> None:
    """One process of a job spread over processes or machines: JOB_JSON (`fairstream.runner.Job`), the cluster's
    ADDRESSES (HOST:PORT;HOST:PORT…), this process's INDEX and its WORKERS; TALLY_PATH gets its counts."""
    from pathlib import Path

    from fairstream.runner import Job, run_worker

    run_worker(Job.model_validate_json(job_json), addresses.split(";"), index, workers, None if tally_path is None else Path(tally_path))


def main() -> None:
    """Run the command; a usage error (unknown option, value out of range) is one `error:` line and exit code 2."""
    try:
        code = cli.main(prog_name="fairstream", standalone_mode=False)
    except click.ClickException as err:
        context = getattr(err, "ctx", None)
        console.error(err.format_message() + (f" (see `{context.command_path} --help`)" if context is not None else ""))
        sys.exit(err.exit_code)
    except click.Abort:
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
