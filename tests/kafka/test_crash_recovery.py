"""kill -9 mid-run, restart from the recovery store: the same distinct alert ids as an uninterrupted run, duplicates exact copies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from connectors.alerts import subscribe
from connectors.kafka import estimates_topic
from connectors.replay import replay
from connectors.synthetic.compas_like import compas_like_events
from pipeline.errors import ConnectorError
from pipeline.runner import Job, KafkaInput, KafkaOutput, execute
from tests.conftest import SPECS

pytestmark = pytest.mark.kafka
SPEC = SPECS / "compas_equalized_odds.yaml"


def monitor_command(bootstrap: str, topic: str, alerts: str, recovery) -> list[str]:
    return [
        sys.executable, "-m", "pipeline.cli", "run", str(SPEC), "--bootstrap", bootstrap, "--topic", topic,
        "--alerts", alerts, "--until-end", "--recovery", str(recovery), "--snapshot-every", "0.2",
    ]  # fmt: skip


def records(bootstrap: str, alerts: str) -> list[dict]:
    """Every record the monitor produced (alerts and estimates), duplicates included."""
    return [record for name in (alerts, estimates_topic(alerts)) for record in subscribe(bootstrap, name, distinct=False)]


def count(bootstrap: str, topic: str) -> int:
    try:
        return sum(1 for _ in subscribe(bootstrap, topic, poll_seconds=0.1))
    except ConnectorError:
        return 0  # not created yet


def test_kill_and_restart_loses_nothing_and_duplicates_exactly(kafka_bootstrap, topic, tmp_path):
    replay(compas_like_events(60_000, seed=3), kafka_bootstrap, topic, partitions=2)
    reference = f"{topic}-ref"
    execute(Job(spec=str(SPEC), input=KafkaInput(bootstrap=kafka_bootstrap, topic=topic, tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=reference)))
    expected = {r["alert_id"]: r for r in records(kafka_bootstrap, reference)}
    assert len(expected) > 1000

    alerts = f"{topic}-crash"
    command = monitor_command(kafka_bootstrap, topic, alerts, tmp_path / "recovery")
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if count(kafka_bootstrap, estimates_topic(alerts)) >= 200 or first.poll() is not None:
            break
        time.sleep(0.2)
    assert first.poll() is None, "the monitor finished before it could be killed; use a longer stream"
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    partial = records(kafka_bootstrap, alerts)
    assert 0 < len({r["alert_id"] for r in partial}) < len(expected)

    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=300)
    produced = records(kafka_bootstrap, alerts)
    distinct = {}
    for record in produced:
        body = {k: v for k, v in record.items() if k != "emitted_at"}
        if record["alert_id"] in distinct:
            assert distinct[record["alert_id"]] == body, "a duplicate differs from its first copy"
        distinct[record["alert_id"]] = body
    assert distinct.keys() == expected.keys()
    assert all(distinct[i] == {k: v for k, v in expected[i].items() if k != "emitted_at"} for i in expected)
