"""How long a decision waits for the shield's answer at a steady rate: in this process (a paced source into the shield
dataflow, the answer timed at its sink) and through Kafka (`fairstream shield run` between a decision topic and its
`.shielded` topic)."""

from __future__ import annotations

import sys
import time
from typing import Any

from bytewax.testing import run_main

from fairstream.compiler.plan import Plan
from fairstream.connectors.kafka import ensure_topics
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.dataflow.shield_flow import build_shield_flow
from fairstream.lab.bench.latency import PacedSource, after_warm_up, kafka_latency
from fairstream.lab.bench.sink import CountingSink
from fairstream.records.envelope import SHIELDED
from fairstream.records.timefmt import format_instant, time_parser

_parse = time_parser("iso")


def decision(index: int, male: bool, hired: bool, now: int) -> dict[str, Any]:
    """A hiring decision of the shipped shield spec's shape, dated now."""
    return {"event": "DECISION", "id": str(index), "time": format_instant(now), "gender": "male" if male else "female", "hired": hired}


def answered_at(record: dict[str, Any]) -> int | None:
    """The event time of the decision a shielded-decision record of the dataflow answers; None for any other record."""
    return _parse(record["record"]["time"]) if record.get("type") == SHIELDED else None


def published_at(decision: dict[str, Any]) -> int:
    """The event time of a shielded decision as `<topic>.shielded` carries it (the decision record itself)."""
    return _parse(decision["time"])


def in_process(plan: Plan, rate: int, seconds: float) -> list[float]:
    """Milliseconds from each decision's making to its shielded record reaching the dataflow's sink."""
    latencies: list[float] = []

    def stamp(_counts: Any, record: dict[str, Any]) -> None:
        made = answered_at(record)
        if made is not None:
            latencies.append(time.time() * 1000 - made)

    run_main(build_shield_flow(plan, PacedSource(decision, rate, seconds), CountingSink(stamp)))
    return after_warm_up(latencies)


def through_kafka(kafka: KafkaConnection, kafka_config: str | None, spec: str, rate: int, seconds: float) -> list[float]:
    """Milliseconds from each decision's production to its shielded record being readable on `<topic>.shielded`."""
    suffix = f"{int(time.time() * 1000)}"
    topic, alerts = f"bench-shield-{suffix}", f"bench-shield-alerts-{suffix}"
    ensure_topics(kafka, {topic: 1, f"{topic}.shielded": 1, alerts: 1})
    job = [sys.executable, "-m", "fairstream.cli", "shield", "run", spec, "--bootstrap", kafka.bootstrap, "--topic", topic, "--alerts", alerts,
           *(["--kafka-config", kafka_config] if kafka_config else [])]  # fmt: skip
    return kafka_latency(kafka, job, topic, f"{topic}.shielded", decision, published_at, rate, seconds, one_each=True)
