"""`fairstream run SPEC`: monitor a file or a Kafka topic and print what was found."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from fairstream.cli import console
from fairstream.cli.errors import reports_errors
from fairstream.cli.kafka_options import file_or_kafka, kafka_options
from fairstream.connectors.alerts import subscribe
from fairstream.connectors.kafka import dead_letter_topic, estimates_topic
from fairstream.errors import ConnectorError, InputError
from fairstream.lifecycle import stopped_by
from fairstream.runner import FORMATS, FileInput, FileOutput, FileRun, Job, KafkaInput, KafkaOutput, execute, guess_format
from fairstream.spec.metric import tests_ratio
from fairstream.verdicts.summary import dead_letter_counts, final_rates, first_violations, latest_with_groups


def print_summary(estimates: list[dict[str, Any]], alerts: list[dict[str, Any]], dead_letters: list[dict[str, Any]]) -> None:
    """Final per-group estimates, first violation per part and pair, and alert and dead-letter counts."""
    last = latest_with_groups(estimates)
    if last is not None:
        rows = final_rates(last)
        counted = any(r.hits is not None for r in rows)  # rates count hits; means and benefit rates do not
        console.table(
            ("Final estimates" if last is estimates[-1] else "Latest estimates published")
            + f" at {last['event_time']} (prior {last['prior']}, κ = {last['confidence']})",
            ["part", "group", "estimate", *(["hits"] if counted else []), "trials"],
            [(r.part, r.group, "suppressed" if r.suppressed else r.estimate, *([r.hits] if counted else []), r.trials) for r in rows],
            right=(2, 3, 4) if counted else (2, 3),
        )
        if any(r.suppressed for r in rows):
            console.console.print("suppressed: a cell of fewer trials than the spec's publish.min_cell, withheld from every record")
        console.console.print(f"closed trials: {last['trials']['closed']}, incomplete: {last['trials']['incomplete']}")
        if last is not estimates[-1]:
            console.console.print(f"at the last evaluation, {estimates[-1]['event_time']}, the window holds too few trials to publish")
    else:
        console.console.print("no trial closed: nothing to estimate")
    violations = first_violations(estimates)
    if violations:
        measure = "ratio then" if tests_ratio(estimates[-1]["metric"]) else "gap then"
        if estimates[-1]["verdict"] != "point" and estimates[-1]["metric"] not in ("delayed_impact", "benefit_rate"):
            measure = f"raw {measure}"  # the tests rest on the raw counts; the MAP point is in the records
        evidence = any(v.evidence for v in violations)
        console.table(
            f"First violation per part and pair of groups ({estimates[-1]['verdict']} verdicts"
            + ("; each constraint's δ split over its groups" if any("constraint" in body for body in estimates[-1]["parts"].values()) else "")
            + ")",
            ["part", "higher", "lower", "first violated", measure, *(["evidence"] if evidence else [])],
            [(v.part, v.high, v.low, v.event_time[:10], v.value, *([v.evidence or ""] if evidence else [])) for v in violations],
            right=(4,),
        )
    dead = dead_letter_counts(dead_letters)
    turned = sum(1 for a in alerts if a["type"] == "fairness.violation")
    console.console.print(
        f"alerts: {turned} violation(s), {len(alerts) - turned} recovery(ies); dead letters: {sum(dead.values())}"
        + (f" ({', '.join(f'{k}: {v}' for k, v in dead.items())})" if dead else ""),
        soft_wrap=True,
    )


@click.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path())
@click.option(
    "--input",
    "input_paths",
    multiple=True,
    help="CSV or JSON-lines file of events, or the ProPublica COMPAS CSV; repeat it or give a quoted glob ('parts/*.jsonl') "
    "for several files, each one input partition (split by key: see `fairstream split`).",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Input file format; guessed from the file name when omitted.")
@click.option("--columns", help="A CSV input without a header line: its column names, comma-separated (default: the spec's input.columns).")
@click.option("--out", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="With --input: directory for alerts.jsonl, estimates.jsonl, dead_letters.jsonl.")
@kafka_options("Kafka bootstrap servers, HOST:PORT: read --topic, write to --alerts.")
@click.option("--topic", default="decisions", show_default=True, help="With --bootstrap: the topic of decision events.")
@click.option("--alerts", "alerts_topic", default="fairness-alerts", show_default=True, help="With --bootstrap: alert topic (estimates go to <alerts>.estimates, dead letters to <alerts>.dlq).")
@click.option("--until-end", is_flag=True, help="With --bootstrap: stop at the end of the topic instead of tailing it.")
@click.option("--give-up-after", type=click.FloatRange(min=1), help="Tailing: exit with an error once the broker has not answered for this many seconds (default: keep retrying, reporting every 30 s).")
@click.option("--recovery", type=click.Path(file_okay=False), help="Recovery store directory: resume from the last snapshot after a crash.")
@click.option("--snapshot-every", default=2.0, show_default=True, type=click.FloatRange(min=0.1), help="Seconds between recovery snapshots.")
@click.option("--metrics-port", type=click.IntRange(1, 65535), help="Serve Prometheus metrics at /metrics and a health check at /healthz on this port while the run lasts (process i of --processes: port + i).")
@click.option("--metrics-host", default="127.0.0.1", show_default=True, help="Address the metrics endpoint listens on; it has no authentication: expose it (0.0.0.0) only behind a proxy that authenticates.")
@click.option("--allow-empty", is_flag=True, help="Exit 0 even when no record was accepted (by default that is an error).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1), help="Worker threads per process.")
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1), help="Cooperating worker processes.")
@reports_errors
def run(
    specs: tuple[str, ...],
    input_paths: tuple[str, ...],
    fmt: str | None,
    columns: str | None,
    out_dir: str,
    bootstrap: str | None,
    kafka_config: str | None,
    topic: str,
    alerts_topic: str,
    until_end: bool,
    give_up_after: float | None,
    recovery: str | None,
    snapshot_every: float,
    metrics_port: int | None,
    metrics_host: str,
    allow_empty: bool,
    workers: int,
    processes: int,
) -> None:
    """Monitor SPECS over an input file (--input) or a Kafka topic (--bootstrap).

    Each SPEC is a spec file, a bundled spec's name or a folder of specs; several are monitored over one read of the
    input, their alerts and estimates in the same outputs (each record names its monitor).
    """
    spec = specs[0] if len(specs) == 1 else list(specs)
    kafka = file_or_kafka(input_paths[0] if input_paths else None, bootstrap, kafka_config)
    started = time.perf_counter()
    if kafka is None:
        job = Job(
            spec=spec,
            input=FileInput(
                path=input_paths[0] if len(input_paths) == 1 else list(input_paths),
                format=fmt or guess_format(input_paths[0]),
                columns=columns.split(",") if columns else None,
            ),
            output=FileOutput(out_dir=out_dir),
            recovery=recovery,
            snapshot_seconds=snapshot_every,
            metrics_port=metrics_port, metrics_host=metrics_host,
        )
    else:
        job = Job(
            spec=spec,
            input=KafkaInput(bootstrap=kafka.bootstrap, topic=topic, tail=not until_end, give_up_after=give_up_after),
            output=KafkaOutput(bootstrap=kafka.bootstrap, alerts=alerts_topic),
            recovery=recovery,
            snapshot_seconds=snapshot_every,
            kafka_config=kafka_config,
            metrics_port=metrics_port, metrics_host=metrics_host,
        )
        if not until_end:
            console.console.print(f"monitoring {topic!r} on {kafka}; alerts to {alerts_topic!r} (Ctrl-C to stop)", soft_wrap=True)
    execute(job, workers=workers, processes=processes, own_process=True)
    if stopped_by():
        console.stopped(stopped_by(), recovery)
        return
    if kafka is None:
        result = FileRun(out_dir)
        estimates, alerts, dead_letters = result.read("estimates.jsonl"), result.read("alerts.jsonl"), result.read("dead_letters.jsonl")
        written = [name for name in ("alerts.jsonl", "estimates.jsonl", "dead_letters.jsonl") if (Path(out_dir) / name).exists()]
        done = f"wrote {', '.join(written) or 'nothing'} to {out_dir} in {time.perf_counter() - started:.1f} s"
    else:
        done = f"read {topic!r} to its end in {time.perf_counter() - started:.1f} s; alerts are on {alerts_topic!r}"
        try:
            estimates = list(subscribe(kafka, estimates_topic(alerts_topic)))
            alerts, dead_letters = list(subscribe(kafka, alerts_topic)), list(subscribe(kafka, dead_letter_topic(alerts_topic)))
        except ConnectorError as err:  # the broker acknowledged every record: only the summary is lost
            console.warning(f"no summary: reading the outputs back failed ({err})")
            console.console.print(done, soft_wrap=True)
            return
    monitors = list(dict.fromkeys(record["monitor"] for record in [*estimates, *alerts]))
    for monitor in monitors:
        if len(monitors) > 1:
            console.console.rule(f"monitor {monitor}")
        print_summary([r for r in estimates if r["monitor"] == monitor], [r for r in alerts if r["monitor"] == monitor], dead_letters)
    if not monitors:
        print_summary([], [], dead_letters)
    console.console.print(done, soft_wrap=True)
    if not estimates and not allow_empty:
        raise InputError(nothing_accepted(dead_letters, "the input" if kafka is None else f"topic {topic!r} (is its name right?)"))


def nothing_accepted(dead_letters: list[dict[str, Any]], source: str) -> str:
    """Why a run that estimated nothing fails: every record rejected (by reason), or no record at all in `source`."""
    counts = dead_letter_counts(dead_letters)
    if not counts:
        return f"{source} held no record to monitor; pass --allow-empty if that is expected"
    reasons = ", ".join(f"{reason}: {count:,}" for reason, count in counts.items())
    return (
        f"no record was accepted: {sum(counts.values()):,} dead letter(s) ({reasons}); check --format, --topic and the spec's "
        "input section, or pass --allow-empty if that is expected"
    )
