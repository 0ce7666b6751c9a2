"""`fairstream bench kafka`: replay rate, monitor vs. passthrough and vs. a plain consumer through a broker (also past start-up), and verdict latency."""

from __future__ import annotations

import math

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import kafka_options
from fairstream.lab.bench.kafka import measure_kafka


@click.command()
@kafka_options("Kafka to measure against (default: a local tansu broker started for the run).")
@click.option("--events", default=1_000_000, show_default=True, type=click.IntRange(1), help="Events replayed to measure the producer.")
@click.option("--flow-events", default=300_000, show_default=True, type=click.IntRange(1), help="Events each flow consumes from Kafka; the monitor and the plain consumer also read twice as many, for their rates past start-up.")
@click.option("--rate", default=2_000, show_default=True, type=click.IntRange(1), help="Decisions per second in the latency probe.")
@click.option("--seconds", default=6.0, show_default=True, type=click.FloatRange(1), help="Length of the latency probe. The test broker (tansu) answers more slowly as a topic grows (a fresh topic's produce-to-read p50 2 ms becomes 138 ms after 18 s of 2 KB records at 2,000/s): a longer probe measures that broker, not the job.")
@reports_errors
def kafka(bootstrap: str | None, kafka_config: str | None, events: int, flow_events: int, rate: int, seconds: float) -> None:
    """Measure the Kafka path end to end, each ratio from one run."""
    with console.progress() as bar:
        task = bar.add_task("starting", total=None)
        result = measure_kafka(
            bootstrap=bootstrap, kafka_config=kafka_config, events=events, flow_events=flow_events, rate=rate, seconds=seconds,
            on_step=lambda step: bar.update(task, description=step),
        )  # fmt: skip
    console.table(
        "Kafka end to end (one run, one machine)",
        ["measure", "value"],
        [
            (f"replay of {result.replay_events:,} events", f"{result.replay_rate:,.0f} msg/s"),
            (f"passthrough (consume, parse, produce), {result.passthrough.events:,} events", f"{result.passthrough.rate:,.0f} ev/s"),
            (f"monitor (consume, parse, trials, verdicts, alerts), {result.monitor.events:,} events", f"{result.monitor.rate:,.0f} ev/s"),
            (f"plain confluent-kafka consumer (consume, JSON-decode), {result.consumer.events:,} events", f"{result.consumer.rate:,.0f} ev/s"),
            ("monitor / passthrough", f"{result.ratio:.2f}"),
            ("monitor / plain consumer (target ≥ 0.80)", f"{result.consumer_ratio:.2f}"),
            (f"monitor past start-up (from {result.monitor.events:,} and {result.longer_monitor.events:,} events)", _measured(result.monitor_past_startup, "{:,.0f} ev/s", STARTUP)),
            ("plain consumer past start-up", _measured(result.consumer_past_startup, "{:,.0f} ev/s", STARTUP)),
            ("monitor / plain consumer past start-up (target ≥ 0.50)", _measured(result.consumer_ratio_past_startup, "{:.2f}", STARTUP)),
            *(
                row
                for engine, latencies in result.latency_ms.items()
                for row in (
                    (f"verdict latency p50 at {result.latency_rate:,} decisions/s, {engine} engine", _measured(result.latency_quantile(0.5, engine), "{:,.0f} ms", NO_VERDICTS)),
                    (f"verdict latency p99, {engine} engine (target ≤ 100 ms)", _measured(result.latency_quantile(0.99, engine), "{:,.0f} ms", NO_VERDICTS)),
                    (f"verdicts measured, {engine} engine", f"{len(latencies):,}"),
                )
            ),
        ],
        right=(1,),
    )


STARTUP = "not measured: the longer run was not slower; give more --flow-events"
NO_VERDICTS = "not measured: no verdict came back; give more --seconds"


def _measured(value: float, form: str, why: str) -> str:
    """A figure as printed, or why it could not be measured (never `nan`)."""
    return why if math.isnan(value) else form.format(value)
