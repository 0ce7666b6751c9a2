"""Scale-out by consumer group: the same keyed topic monitored by 1, 2, … members of a group (`fairstream run --group`,
each a process of its own), and the pause a member joining or leaving costs a group at work.

Throughput is read off the group's own steps topic: from the time of its first step to that of its last (their Kafka
timestamps), so the members' start-up and the group's first join are not counted, the rebalances while members come up
are. The pause is the longest time an input partition went without a step while decisions kept coming, in the seconds
after a member joined or left, against the longest in a window of the same length with no member change.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.kafka import PRODUCER_CONFIG, estimates_topic
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.connectors.replay import EventFields, replay
from fairstream.connectors.synthetic.compas_like import compas_like_events
from fairstream.paths import SPECS_DIR

SPEC = str(SPECS_DIR / "compas_equalized_odds.yaml")
SEED = 2013
SESSION_TIMEOUT_MS = "6000"
"""The members' session: a new group's first join waits about half of it, a member that died is replaced after it."""


@dataclass(frozen=True)
class GroupRun:
    """One member count: the events, the seconds from the first step to the last, and whether its alerts and estimates
    equal those of one member."""

    members: int
    events: int
    seconds: float
    identical: bool

    @property
    def rate(self) -> float:
        return self.events / self.seconds


@dataclass(frozen=True)
class Pauses:
    """The longest time any input partition went without a step: in a quiet window, after a join, after a leave."""

    window: float
    quiet: float
    joined: float
    left: float


def member_command(bootstrap: str, topic: str, group: str, alerts: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "fairstream.cli", "run", SPEC, "--bootstrap", bootstrap, "--topic", topic, "--alerts", alerts, "--group", group, *extra]


def _member_env(kafka: KafkaConnection) -> dict[str, str]:
    env = {**os.environ, "FAIRSTREAM_KAFKA_SESSION_TIMEOUT_MS": SESSION_TIMEOUT_MS}
    env.update({f"FAIRSTREAM_KAFKA_{name.upper().replace('.', '_')}": str(value) for name, value in kafka.properties.items()})
    return env


def step_times(kafka: KafkaConnection, group: str) -> list[tuple[int, float]]:
    """Every step of the group as (input partition, Kafka timestamp in seconds), in the order written."""
    consumer = Consumer(kafka.client({"group.id": f"{group}.bench", "enable.auto.commit": "false", "enable.partition.eof": "true"}))
    consumer.assign([TopicPartition(f"{group}.steps", 0, 0)])
    found: list[tuple[int, float]] = []
    try:
        while True:
            messages = consumer.consume(5000, 5.0)
            if not messages:
                return found
            for message in messages:
                if message.error() is None:
                    found.append((int(message.key()), message.timestamp()[1] / 1000))
                elif message.error().code() == KafkaError._PARTITION_EOF:
                    return found
    finally:
        consumer.close()


def _records(bootstrap: str, alerts: str) -> tuple[list[Any], list[Any]]:
    def plain(records: Any) -> list[Any]:
        return [{key: value for key, value in record.items() if key != "emitted_at"} for record in records]

    return plain(subscribe(bootstrap, alerts, poll_seconds=0.5)), plain(subscribe(bootstrap, estimates_topic(alerts), poll_seconds=0.5))


def measure_members(kafka: KafkaConnection, topic: str, events: int, counts: list[int], tag: str) -> list[GroupRun]:
    """Each member count over the whole topic (`--until-end`), in fresh processes and a group of its own."""
    runs: list[GroupRun] = []
    reference: tuple[list[Any], list[Any]] | None = None
    for count in counts:
        group, alerts = f"{tag}-g{count}", f"{tag}-alerts{count}"
        members = [subprocess.Popen(member_command(kafka.bootstrap, topic, group, alerts, "--until-end"), env=_member_env(kafka), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(count)]
        failures = [err for member in members if (err := member.communicate()[1]) and member.returncode != 0]
        if failures:
            raise RuntimeError(f"a member of {count} failed: {failures[0][-500:]}")
        times = [at for _partition, at in step_times(kafka, group)]
        records = _records(kafka.bootstrap, alerts)
        reference = reference or records
        runs.append(GroupRun(count, events, max(times) - min(times), records == reference))
    return runs


def _feed(kafka: KafkaConnection, topic: str, rate: int, seconds: float, stop: threading.Event) -> None:
    """Produce decisions at `rate` a second for `seconds`, keyed by defendant, in 20 ms batches."""
    producer = Producer(kafka.client({"linger.ms": "5", **PRODUCER_CONFIG}))
    stream: Iterator[dict[str, Any]] = compas_like_events(10_000_000, SEED + 1, per_day=2000)
    started = time.monotonic()
    sent = 0
    while not stop.is_set() and time.monotonic() - started < seconds:
        due = int((time.monotonic() - started) * rate)
        for record in (next(stream) for _ in range(max(0, due - sent))):
            producer.produce(topic, orjson.dumps(record), str(record["id"]).encode())
        sent = max(sent, due)
        producer.poll(0)
        time.sleep(0.02)
    producer.flush(10)


def measure_pauses(kafka: KafkaConnection, topic: str, rate: int, window: float, tag: str) -> Pauses:
    """One member at work on a fed topic; a second joins, then leaves (SIGTERM): the longest step gaps after each."""
    group, alerts = f"{tag}-pause", f"{tag}-pause-alerts"
    stop = threading.Event()
    settle = 12.0
    feeder = threading.Thread(target=_feed, args=(kafka, topic, rate, settle + 3 * window + 5, stop), daemon=True)
    env = _member_env(kafka)
    first = subprocess.Popen(member_command(kafka.bootstrap, topic, group, alerts), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    feeder.start()
    second = None
    try:
        time.sleep(settle)  # the first member has joined and works
        quiet_from = time.time()
        time.sleep(window)
        joined_at = time.time()
        second = subprocess.Popen(member_command(kafka.bootstrap, topic, group, alerts), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(window)
        left_at = time.time()
        second.send_signal(signal.SIGTERM)
        second.wait(60)
        time.sleep(window)
    finally:
        stop.set()
        feeder.join(30)
        for member in (first, second):
            if member is not None and member.poll() is None:
                member.send_signal(signal.SIGTERM)
                member.wait(60)
    steps = step_times(kafka, group)
    return Pauses(window, longest_gap(steps, quiet_from, window), longest_gap(steps, joined_at, window), longest_gap(steps, left_at, window))


def longest_gap(steps: list[tuple[int, float]], start: float, window: float) -> float:
    """The longest time, over every input partition, between two steps of it (or from `start` to its first step) in
    the window [start, start + window]."""
    longest = 0.0
    for partition in {partition for partition, _at in steps}:
        times = [at for part, at in steps if part == partition and start <= at <= start + window]
        edges = [start, *times, start + window] if times else [start, start + window]
        longest = max(longest, *(later - earlier for earlier, later in zip(edges, edges[1:])))
    return longest


def fill_topic(kafka: KafkaConnection, topic: str, events: int, partitions: int) -> int:
    """A topic of `events` COMPAS-shaped events keyed by defendant; the number written."""
    stream = compas_like_events(events, SEED, per_day=max(250.0, events / 2000))
    return replay((record for _, record in zip(range(events), stream)), kafka, topic, fields=EventFields("id", "date"), partitions=partitions).sent
