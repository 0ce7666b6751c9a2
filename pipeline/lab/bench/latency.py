"""Latency probes: hiring decisions made at a steady rate with event time = the wall clock, and how long until the
answer to each (a verdict, a shielded decision) can be read — through Kafka by a process that reads the answers'
topic, or in this process from a dataflow's sink."""

from __future__ import annotations

import os
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import orjson

from fairstream.connectors.broker import free_port
from fairstream.connectors.kafka import CONSUMER_CONFIG, PRODUCER_CONFIG
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.engine.api import FixedPartitionedSource, StatefulSourcePartition
from fairstream.records.events import RawRecord

WARM_UP = 0.1
"""The share of the earliest answers left out: the job's first decisions wait on its start-up."""
PROBE_FETCH = {"fetch.wait.max.ms": "1"}
"""The probe's reader asks again within 1 ms: a broker that holds a fetch until its wait runs out even when a record
has come (the test broker does) would add up to the job's own 20 ms to when an answer is seen, not when it is readable."""
ANSWER_WAIT = 30.0
"""Seconds the probe waits after the last decision for answers still to come (a loaded machine answers late)."""


def decisions(rate: int, seconds: float, seed: int = 5) -> Iterator[tuple[float, int, bool, bool]]:
    """(seconds from the start at which it is due, index, male, hired): half the applicants men, hired at 0.5 and 0.3."""
    rng = np.random.default_rng(seed)
    for index in range(int(rate * seconds)):
        male = bool(rng.random() < 0.5)
        yield index / rate, index, male, bool(rng.random() < (0.5 if male else 0.3))


def after_warm_up(latencies: list[float]) -> list[float]:
    return latencies[int(len(latencies) * WARM_UP) :]


def kafka_latency(
    kafka: KafkaConnection,
    job: Sequence[str],
    topic: str,
    answers: str,
    record: Callable[[int, bool, bool, int], dict[str, Any]],
    answered_at: Callable[[dict[str, Any]], int | None],
    rate: int,
    seconds: float,
    *,
    one_each: bool = False,
    engine: str | None = None,
) -> list[float]:
    """Start `job` (a command reading `topic`), wait until it is ready (its /readyz: its partitions assigned and read),
    produce `record(index, male, hired, now ms)` at `rate` per second, and read `answers`: each answer's latency is when
    it was read minus the event time `answered_at` finds in it (None: not an answer). `one_each`: every decision gets
    one answer, waited for up to `ANSWER_WAIT` after the last (else 2 s). `engine`: the job's (`FAIRSTREAM_ENGINE`), else
this process's."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    port = free_port()
    env = {**os.environ, "FAIRSTREAM_ENGINE": engine} if engine else None
    process = subprocess.Popen([*job, "--metrics-port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    latencies: list[float] = []
    stop = threading.Event()

    def read() -> None:
        consumer = Consumer(kafka.client({"group.id": "bench", "enable.auto.commit": "false", **CONSUMER_CONFIG, **PROBE_FETCH}))
        consumer.assign([TopicPartition(answers, 0, 0)])
        while not stop.is_set():
            message = consumer.poll(0.05)
            if message is None or message.error():
                continue
            arrived = time.time() * 1000
            event_time = answered_at(orjson.loads(message.value()))
            if event_time is not None:
                latencies.append(arrived - event_time)
        consumer.close()

    reader = threading.Thread(target=read)
    reader.start()
    producer = Producer(kafka.client({"linger.ms": "5", **PRODUCER_CONFIG}))  # its producer id is granted while the job starts
    try:
        wait_until_ready(process, port)
        started = time.perf_counter()
        produced = 0
        for due, index, male, hired in decisions(rate, seconds):
            pause = started + due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            body = record(index, male, hired, int(time.time() * 1000))
            producer.produce(topic, orjson.dumps(body), str(index).encode())
            producer.poll(0)
            produced += 1
        producer.flush(10)
        deadline = time.monotonic() + (ANSWER_WAIT if one_each else 2)
        while (not one_each or len(latencies) < produced) and time.monotonic() < deadline:  # a loaded machine answers late, not never
            time.sleep(0.1)
    finally:
        stop.set()
        reader.join()
        process.terminate()
        process.wait(10)
    return after_warm_up(latencies)


def wait_until_ready(process: subprocess.Popen, port: int, timeout: float = 120.0) -> None:
    """Wait for the job's readiness (not a guess of how long it starts: a loaded machine takes longer)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:  # not serving yet, or 503 (an HTTPError is an OSError) while its partitions are assigned
            pass
        time.sleep(0.1)


class _PacedPartition(StatefulSourcePartition[RawRecord, int]):
    def __init__(self, record: Callable[[int, bool, bool, int], dict[str, Any]], rate: int, seconds: float):
        self._due = list(decisions(rate, seconds))
        self._record = record
        self._next = 0
        self._started: float | None = None

    def next_batch(self) -> list[RawRecord]:
        if self._next >= len(self._due):
            raise StopIteration
        if self._started is None:
            self._started = time.perf_counter()
        elapsed = time.perf_counter() - self._started
        batch = []
        while self._next < len(self._due) and self._due[self._next][0] <= elapsed:
            _due, index, male, hired = self._due[self._next]
            batch.append(RawRecord(0, index, self._record(index, male, hired, int(time.time() * 1000))))
            self._next += 1
        return batch

    def next_awake(self) -> Any:
        if self._started is None or self._next >= len(self._due):
            return None
        return datetime.now(UTC) + timedelta(seconds=max(0.0, self._started + self._due[self._next][0] - time.perf_counter()))

    def snapshot(self) -> int:
        return self._next


class PacedSource(FixedPartitionedSource[RawRecord, int]):
    """One partition of decisions made at `rate` per second for `seconds`, each `record(index, male, hired, now ms)`
    when it falls due (records as dicts, as a CSV row arrives)."""

    def __init__(self, record: Callable[[int, bool, bool, int], dict[str, Any]], rate: int, seconds: float):
        self._record = record
        self._rate = rate
        self._seconds = seconds

    def list_parts(self) -> list[str]:
        return ["0-paced"]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _PacedPartition:
        return _PacedPartition(self._record, self._rate, self._seconds)
