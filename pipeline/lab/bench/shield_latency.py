"""How long a decision waits for the shield's answer at a steady rate: in this process (a paced source into the shield
dataflow, the answer timed at its sink), over HTTP (`fairstream shield serve`, callers on keep-alive connections) and
through Kafka (`fairstream shield run` between a decision topic and its `.shielded` topic)."""

from __future__ import annotations

import http.client
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import orjson

from fairstream.compiler.plan import Plan
from fairstream.connectors.broker import free_port
from fairstream.connectors.kafka import ensure_topics
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.dataflow.shield_flow import build_shield_flow
from fairstream.engine.api import run_main
from fairstream.lab.bench.latency import PacedSource, after_warm_up, decisions, kafka_latency, wait_until_ready
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


CALLERS = 8
"""Callers of the HTTP probe, each on its own keep-alive connection, taking the decisions in turn."""


def over_http(spec: str, rate: int, seconds: float) -> tuple[list[float], float]:
    """Milliseconds from each call's start to its answer, with `CALLERS` callers sharing `rate` decisions per second;
    and the decisions per second the same callers get answered when they call as fast as they can."""
    with tempfile.TemporaryDirectory() as scratch:
        port = free_port()
        command = [sys.executable, "-m", "fairstream.cli", "shield", "serve", spec, "--port", str(port), "--out", scratch]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until_ready(server, port)
            paced = _call(port, list(decisions(rate, seconds)), paced=True)
            started = time.perf_counter()
            flat_out = _call(port, list(decisions(rate, seconds, seed=6)), paced=False)
            rate_reached = len(flat_out) / (time.perf_counter() - started)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
    return after_warm_up(paced), rate_reached


def _call(port: int, due: list[tuple[float, int, bool, bool]], *, paced: bool) -> list[float]:
    """Each decision posted by one of the callers (in turn), at its time where `paced`; the milliseconds each took."""
    latencies: list[float] = []
    lock = threading.Lock()
    started = time.perf_counter()

    def caller(first: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        for at, index, male, hired in due[first::CALLERS]:
            if paced and (pause := started + at - time.perf_counter()) > 0:
                time.sleep(pause)
            body = orjson.dumps(decision(index, male, hired, int(time.time() * 1000)))
            sent = time.perf_counter()
            connection.request("POST", "/decisions", body, {"Content-Type": "application/json"})
            connection.getresponse().read()
            mine.append((time.perf_counter() - sent) * 1000)
        connection.close()
        with lock:
            latencies.extend(mine)

    callers = [threading.Thread(target=caller, args=(first,)) for first in range(CALLERS)]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join()
    return latencies
