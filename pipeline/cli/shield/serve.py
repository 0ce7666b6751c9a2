"""`fairstream shield serve SPEC --port N`: the spec's shield as an HTTP server, each decision answered by the call that
brings it, its records written as `fairstream shield run` writes them."""

from __future__ import annotations

from typing import Any

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import kafka_options
from fairstream.compiler.load import load_plan
from fairstream.connectors.kafka import reach
from fairstream.connectors.kafka_config import checked_connection, kafka_configured
from fairstream.process.listening import listen
from fairstream.records.errors import SpecError

BACKLOG = 1024
"""Connections the listening socket queues: a burst of callers waits, not refused."""


@click.command(name="serve")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--port", default=8060, show_default=True, type=click.IntRange(1, 65535), help="Port to serve on.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve on; the server has no authentication: expose it only behind a proxy that authenticates.")
@click.option("--out", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="Without a Kafka: decisions_shielded.jsonl, alerts.jsonl (interventions), estimates.jsonl (statuses), dead_letters.jsonl, seals.jsonl.")
@kafka_options("Kafka bootstrap servers: shielded decisions to <topic>.shielded, interventions to --alerts (instead of --out).")
@click.option("--topic", default="decisions", show_default=True, help="With a Kafka: the decision topic whose .shielded topic gets the shielded decisions.")
@click.option("--alerts", "alerts_topic", default="fairness-alerts", show_default=True, help="With a Kafka: the alert topic.")
@click.option("--replication-factor", type=click.IntRange(1), help="With a Kafka: replicas of each output topic fairstream creates (default: the broker's).")
@reports_errors
def serve_command(
    spec: str, port: int, host: str, out_dir: str, bootstrap: str | None, kafka_config: str | None, topic: str, alerts_topic: str, replication_factor: int | None
) -> None:
    """Serve SPEC's shield: POST a decision record (JSON, as on the decision topic) to /decisions and get the shielded
    decision back; /metrics, /healthz and /readyz beside it. Stop with Ctrl-C or SIGTERM: the closing status and seal
    are written then."""
    import uvicorn

    from fairstream.serving.record_writers import FileRecords, KafkaRecords
    from fairstream.serving.shield_app import create_app
    from fairstream.serving.shield_service import ShieldService
    from fairstream.shields.runtime.configured import configure

    plan = load_plan(spec)
    if plan.spec.shield is None:
        raise SpecError(plan.spec.monitor, [("shield", "the spec has no shield section")])
    kafka = checked_connection(bootstrap, kafka_config) if bootstrap or kafka_config or kafka_configured() else None
    if kafka is not None:
        reach(kafka)
    listener = listen(host, port, backlog=BACKLOG)  # a port in use says so before the shield is synthesized
    console.console.print(configure(plan.spec.shield).summary(plan.spec.shield), soft_wrap=True, markup=False)
    if kafka is None:
        writer = FileRecords(out_dir, plan.spec.dead_letters.max_file_bytes)
    else:
        writer = KafkaRecords(kafka, topic, alerts_topic, replication_factor=replication_factor)
    service = ShieldService(plan, writer)
    shown = f"[{host}]" if ":" in host else host
    console.console.print(f"shield {plan.spec.monitor!r} at http://{shown}:{port}/decisions; records to {writer.describe()} (Ctrl-C to stop)", soft_wrap=True, markup=False)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            self._captured_signals.clear()  # a stop by SIGINT or SIGTERM ends with exit 0 once the records are written

    Server(uvicorn.Config(create_app(service), log_level="warning", timeout_keep_alive=5, backlog=BACKLOG)).run(sockets=[listener])
    console.console.print(f"shielded {service.step.run.answered:,} decisions, {service.step.run.flips:,} interventions; records in {writer.describe()}", soft_wrap=True)
    if service.unacknowledged:
        console.error(f"{service.unacknowledged:,} record(s) not acknowledged by Kafka within 30 s")
        raise SystemExit(3)
