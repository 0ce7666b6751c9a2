"""`fairstream demo`: the headline use in one command — a broker, COMPAS replayed into it, the monitor, the alerts read back."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import click

from fairstream.cli import console
from fairstream.cli.alerts import print_alerts
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import kafka_options
from fairstream.cli.run import print_run
from fairstream.connectors.alerts import subscribe
from fairstream.connectors.broker import kafka_or_local
from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.replay import EventFields, replay
from fairstream.connectors.synthetic.compas_like import compas_like_events
from fairstream.datasets import CATALOG, cache_dir, locate
from fairstream.datasets.fetch import fetch
from fairstream.paths import SPECS_DIR
from fairstream.records.errors import FairstreamError
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute, job_plans


@click.command()
@click.option("--input", "input_path", type=click.Path(dir_okay=False), help="The ProPublica COMPAS CSV (default: ../shared/data, else the data cache, else fetched into it as `fairstream data get compas` does).")
@click.option("--synthetic", "synthetic", type=click.IntRange(1), help="Replay a COMPAS-shaped synthetic stream of this many defendants instead.")
@kafka_options("Use this Kafka instead of starting a local broker (KAFKA_BOOTSTRAP is honoured too).")
@click.option("--spec", default=str(SPECS_DIR / "compas_equalized_odds.yaml"), show_default=False, type=click.Path(dir_okay=False), help="Monitor spec (default: specs/compas_equalized_odds.yaml).")
@click.option("--partitions", default=2, show_default=True, type=click.IntRange(1), help="Partitions of the decisions topic.")
@reports_errors
def demo(input_path: str | None, synthetic: int | None, bootstrap: str | None, kafka_config: str | None, spec: str, partitions: int) -> None:
    """Replay COMPAS into Kafka, monitor it for equalized odds, and print the alerts from the alert topic."""
    suffix = f"{int(time.time())}"
    decisions, alerts = f"decisions-{suffix}", f"fairness-alerts-{suffix}"
    def started(address: str) -> None:
        console.console.print(f"started a local Kafka-protocol broker (tansu, in memory) at {address}")

    with kafka_or_local(bootstrap, kafka_config, on_start=started) as kafka, tempfile.TemporaryDirectory() as scratch:
        compas = None if synthetic is not None else Path(input_path) if input_path else locate("compas") or fetched_compas()
        if compas is not None:
            events: list | Iterator = compas_events(compas)
            label = f"COMPAS ({compas})"
        else:
            count = synthetic or 7214
            path = Path(scratch) / "compas_like.jsonl"
            write_jsonl(path, compas_like_events(count, seed=7))
            events = path.open("rb")
            label = f"a synthetic COMPAS-shaped stream of {count:,} defendants"
        console.console.print(f"replaying {label} into {decisions!r}", soft_wrap=True)
        with console.progress() as bar:
            task = bar.add_task("replaying", total=len(events) if isinstance(events, list) else None)
            sent = replay(events, kafka, decisions, fields=EventFields("id", "date"), partitions=partitions, progress=lambda n: bar.update(task, advance=n))
        console.console.print(f"replayed {sent.sent:,} events at {sent.rate:,.0f} msg/s; monitoring to the end of the topic", soft_wrap=True)
        started = time.perf_counter()
        job = Job(
            spec=spec,
            input=KafkaInput(bootstrap=kafka.bootstrap, topics=[decisions], tail=False),
            output=KafkaOutput(bootstrap=kafka.bootstrap, alerts=alerts),
            kafka_config=kafka_config,
        )
        tally = execute(job)
        console.console.print(f"monitor finished in {time.perf_counter() - started:.1f} s; reading {alerts!r}", soft_wrap=True)
        alert_records = list(subscribe(kafka, alerts))
        print_run(tally, job_plans(job))
        print_alerts(alert_records, as_json=False, title=f"Alerts read back from {alerts!r}")


def fetched_compas() -> Path | None:
    """COMPAS fetched into the data cache; None, said in one line, where it cannot be (the demo then replays a synthetic stream)."""
    console.console.print(f"fetching COMPAS into {cache_dir()} (`fairstream data get compas`)", soft_wrap=True)
    try:
        return fetch(CATALOG["compas"], cache_dir())[0]
    except FairstreamError as err:
        console.warning(f"{err}; replaying a synthetic COMPAS-shaped stream instead")
        return None
