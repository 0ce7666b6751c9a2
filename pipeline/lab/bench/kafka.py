"""End to end through a broker: replay rate, monitor vs. passthrough events/s, and verdict latency at a steady rate."""

from __future__ import annotations

import itertools
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import yaml

from fairstream.connectors.broker import kafka_or_local
from fairstream.connectors.kafka import ensure_topics, estimates_topic
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.connectors.replay import EventFields, replay
from fairstream.connectors.synthetic.compas_like import compas_like_events
from fairstream.engine.api import INSTALLED
from fairstream.lab.bench.latency import kafka_latency
from fairstream.paths import SPECS_DIR
from fairstream.records.errors import FairstreamError
from fairstream.records.timefmt import time_parser

LATENCY_SPEC = {
    "monitor": "bench-latency",
    "description": "one verdict per hiring decision, event time = the wall clock at production",
    "input": {"time": "time_ms", "time_format": "epoch_ms", "key": "id", "kind": "event", "kinds": {"DECISION": {"gender": "str", "hired": "bool"}}},
    "trial": {"close_on": ["DECISION"]},
    "variables": {"group": {"first": "DECISION", "field": "gender"}, "hired": {"first": "DECISION", "field": "hired"}},
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "hired", "threshold": 0.1},
    "estimator": {"prior": 0.5, "confidence": 24},
    "evaluate": {"on": "close", "resolution": "10ms"},
}
"""A hiring monitor whose verdicts follow each decision: the latency probe."""


@dataclass(frozen=True)
class FlowRate:
    flow: str
    events: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.events / self.seconds


def rate_past_startup(short: FlowRate, long: FlowRate) -> float:
    """Events/s once a flow is running: the extra events of the longer run over its extra seconds, so the start-up both
    runs pay (connecting, fetching metadata, the first fetch) drops out (NaN when the longer run was not slower)."""
    extra = long.seconds - short.seconds
    return (long.events - short.events) / extra if extra > 0 else float("nan")


@dataclass(frozen=True)
class KafkaBenchResult:
    replay_events: int
    replay_rate: float
    passthrough: FlowRate
    monitor: FlowRate
    consumer: FlowRate
    """A plain confluent-kafka consumer reading (and JSON-decoding) the same topic."""
    longer_monitor: FlowRate
    longer_consumer: FlowRate
    """The monitor and the plain consumer over a topic with twice the events: with the shorter runs, their rates past start-up."""
    latency_rate: float
    latency_ms: dict[str, list[float]]
    """Per engine the job ran on (every one installed), each verdict's latency."""

    @property
    def ratio(self) -> float:
        return self.monitor.rate / self.passthrough.rate

    @property
    def consumer_ratio(self) -> float:
        """Monitor events/s over the plain consumer's (the target: at least 0.8)."""
        return self.monitor.rate / self.consumer.rate

    @property
    def monitor_past_startup(self) -> float:
        return rate_past_startup(self.monitor, self.longer_monitor)

    @property
    def consumer_past_startup(self) -> float:
        return rate_past_startup(self.consumer, self.longer_consumer)

    @property
    def consumer_ratio_past_startup(self) -> float:
        """Monitor over plain consumer once both are running: what a long backlog or a steady stream sees."""
        return self.monitor_past_startup / self.consumer_past_startup

    def latency_quantile(self, q: float, engine: str) -> float:
        latencies = self.latency_ms[engine]
        return float(np.quantile(latencies, q)) if latencies else float("nan")


def measure_kafka(
    *,
    bootstrap: str | None = None,
    kafka_config: str | None = None,
    events: int = 1_000_000,
    flow_events: int = 300_000,
    rate: int = 2_000,
    seconds: float = 10.0,
    on_step: Callable[[str], None] = lambda _step: None,
) -> KafkaBenchResult:
    """Run the three measurements against the Kafka given (`bootstrap`, `kafka_config`, FAIRSTREAM_KAFKA_*), or a local
    broker started for the purpose."""
    suffix = f"{int(time.time() * 1000)}"
    with kafka_or_local(bootstrap, kafka_config) as servers:
        on_step(f"replaying {events:,} COMPAS-shaped events")
        count = max(events, 2 * flow_events)
        lines = [orjson.dumps(e) for e in itertools.islice(compas_like_events(count, 11, per_day=250.0), count)]
        replayed = replay(lines[:events], servers, f"bench-replay-{suffix}", fields=EventFields("id", "date"), partitions=2)
        topic, longer = f"bench-flows-{suffix}", f"bench-flows-longer-{suffix}"
        replay(lines[:flow_events], servers, topic, fields=EventFields("id", "date"), partitions=2)
        replay(lines[: 2 * flow_events], servers, longer, fields=EventFields("id", "date"), partitions=2)
        del lines
        flows = {}
        for flow in ("consumer", "passthrough", "monitor"):
            on_step(f"{flow} over {flow_events:,} events from Kafka to Kafka")
            flows[flow] = _run_child(flow, servers.bootstrap, kafka_config, topic, flow_events)
        for flow in ("consumer", "monitor"):
            on_step(f"{flow} over {2 * flow_events:,} events")
            flows[f"longer {flow}"] = _run_child(flow, servers.bootstrap, kafka_config, longer, 2 * flow_events)
        latencies = {}
        for engine in INSTALLED:
            on_step(f"verdict latency at {rate:,} decisions/s for {seconds:.0f} s, {engine} engine")
            latencies[engine] = _latency(servers, kafka_config, f"{suffix}-{engine}", rate, seconds, engine)
    return KafkaBenchResult(
        events, replayed.rate, flows["passthrough"], flows["monitor"], flows["consumer"], flows["longer monitor"], flows["longer consumer"], rate, latencies
    )


def _run_child(flow: str, bootstrap: str, kafka_config: str | None, topic: str, events: int) -> FlowRate:
    spec = str(SPECS_DIR / "compas_equalized_odds.yaml")
    command = [sys.executable, "-m", "fairstream.lab.bench.kafka_flows", flow, bootstrap, kafka_config or "", topic, spec, str(events)]
    child = subprocess.run(command, capture_output=True, text=True)
    if child.returncode != 0:
        raise FairstreamError(f"the {flow} process failed:\n" + "\n".join(child.stderr.strip().splitlines()[-5:]))
    found = orjson.loads(child.stdout.strip().splitlines()[-1])
    return FlowRate(flow, found["events"], found["seconds"])


def _latency(kafka: KafkaConnection, kafka_config: str | None, suffix: str, rate: int, seconds: float, engine: str) -> list[float]:
    """Decisions produced at `rate` per second with event time = now, the job on `engine`; latency = when its verdict is
    readable − event time."""
    topic, alerts = f"bench-latency-{suffix}", f"bench-latency-alerts-{suffix}"
    ensure_topics(kafka, {topic: 2, alerts: 1, estimates_topic(alerts): 1, f"{alerts}.dlq": 1})
    parse = time_parser("iso")
    with tempfile.TemporaryDirectory() as scratch:
        spec = Path(scratch) / "latency.yaml"
        spec.write_text(yaml.safe_dump(LATENCY_SPEC, sort_keys=False))
        job = [sys.executable, "-m", "fairstream.cli", "run", str(spec), "--bootstrap", kafka.bootstrap, "--topic", topic, "--alerts", alerts,
               *(["--kafka-config", kafka_config] if kafka_config else [])]  # fmt: skip

        def record(index: int, male: bool, hired: bool, now: int) -> dict[str, Any]:
            return {"event": "DECISION", "id": str(index), "time_ms": now, "gender": "male" if male else "female", "hired": hired}

        return kafka_latency(kafka, job, topic, estimates_topic(alerts), record, lambda estimate: parse(estimate["event_time"]), rate, seconds, engine=engine)
