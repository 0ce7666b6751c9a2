"""A tailed topic with an empty partition still gets verdicts: the idle partition stops holding the watermark back."""

from __future__ import annotations

import subprocess
import sys
import time

import orjson
import pytest
from confluent_kafka import Producer

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.kafka import PRODUCER_CONFIG, ensure_topics, estimates_topic
from fairstream.records.errors import ConnectorError
from tests.conftest import SPECS

pytestmark = pytest.mark.kafka


def test_an_empty_partition_does_not_stall_evaluation(kafka_bootstrap, topic):
    ensure_topics(kafka_bootstrap, {topic: 2})
    alerts = f"{topic}-alerts"
    producer = Producer({"bootstrap.servers": kafka_bootstrap, **PRODUCER_CONFIG})
    for day in range(1, 29):  # every event into partition 0: partition 1 stays empty
        event = {"event": "DECISION", "id": str(day), "time": f"2024-02-{day:02d}T12:00:00Z", "gender": "female" if day % 2 else "male", "hired": day % 3 == 0}
        producer.produce(topic, orjson.dumps(event), str(day).encode(), partition=0)
    producer.flush(10)
    monitor = subprocess.Popen(
        [sys.executable, "-m", "fairstream.cli", "run", str(SPECS / "hiring_demographic_parity.yaml"), "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline, found = time.monotonic() + 60, []
        while time.monotonic() < deadline and not found:
            time.sleep(1)
            try:
                found = list(subscribe(kafka_bootstrap, estimates_topic(alerts), poll_seconds=0.2))
            except ConnectorError:
                found = []
        assert found, "no evaluation while one partition had no events"
        assert monitor.poll() is None
    finally:
        monitor.terminate()
        monitor.wait(10)
