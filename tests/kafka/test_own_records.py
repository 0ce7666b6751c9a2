"""A Kafka run reports what it read and wrote itself: an alert topic that already holds an earlier run's records changes
neither its summary nor its exit code; a misspelt input topic is an error (read to its end) or waited for with a word
every 30 s (tailed), and it is never created by asking for it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import PRODUCER_CONFIG, ensure_topics
from fairstream.connectors.replay import replay

pytestmark = pytest.mark.kafka


def fairstream(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", *args], capture_output=True, text=True, timeout=240, **kwargs)


def topics_on(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def test_an_alert_topic_holding_an_earlier_run_changes_neither_summary_nor_exit_code(kafka_bootstrap, topic, compas_csv):
    alerts = f"{topic}-alerts"
    replay(compas_events(compas_csv), kafka_bootstrap, topic)
    first = fairstream("run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts, "--until-end")
    assert first.returncode == 0, first.stderr
    assert "alerts: 2 violation(s)" in first.stdout  # the earlier run's records are on the alert topics now

    garbage = f"{topic}-garbage"
    ensure_topics(kafka_bootstrap, {garbage: 1})
    producer = Producer({"bootstrap.servers": kafka_bootstrap, **PRODUCER_CONFIG})
    for index in range(50):
        producer.produce(garbage, f"not json {index}".encode())
    assert producer.flush(30) == 0
    second = fairstream("run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap, "--topic", garbage, "--alerts", alerts, "--until-end")
    assert second.returncode == 1
    assert "closed trials" not in second.stdout and "violation(s)" in second.stdout
    assert "alerts: 0 violation(s), 0 recovery(ies); dead letters: 50 (not_json: 50)" in second.stdout
    assert second.stderr.splitlines()[-1].startswith("error: no record was accepted: 50 dead letter(s) (not_json: 50)")


def test_a_missing_topic_read_to_its_end_is_an_error_and_is_not_created(kafka_bootstrap, topic):
    result = fairstream("run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap, "--topic", f"{topic}-typo", "--alerts", f"{topic}-alerts", "--until-end")
    assert result.returncode == 1
    assert result.stderr == f"error: topic '{topic}-typo' does not exist on {kafka_bootstrap}\n"
    assert f"{topic}-typo" not in topics_on(kafka_bootstrap)


def test_a_tailed_missing_topic_is_reported_waited_for_and_not_created(kafka_bootstrap, topic, compas_csv):
    command = [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", f"{topic}-alerts"]
    tailing = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first_line = tailing.stderr.readline()
    assert first_line == f"warning: input topic '{topic}' does not exist on {kafka_bootstrap}; waiting for it to be created (said again every 30 s)\n"
    assert topic not in topics_on(kafka_bootstrap)
    replay(compas_events(compas_csv)[:2000], kafka_bootstrap, topic)  # created by its producer: the run goes on reading it
    deadline = time.monotonic() + 60
    while f"{topic}-alerts.estimates" not in topics_on(kafka_bootstrap) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    tailing.send_signal(signal.SIGTERM)
    started = time.monotonic()
    _, rest = tailing.communicate(timeout=30)
    assert tailing.returncode == 0 and time.monotonic() - started < 10
    assert rest.splitlines()[-1].startswith("stopped on SIGTERM")


def replicas(bootstrap: str, topic: str) -> list[int]:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics[topic]
    return [len(partition.replicas) for partition in metadata.partitions.values()]


def test_output_topics_are_created_with_the_replication_factor_asked_for_else_the_brokers_default(kafka_bootstrap, topic, compas_csv):
    """tansu reports the replicas a topic was created with: 3 when asked for, its default (1) otherwise."""
    replay(compas_events(compas_csv)[:500], kafka_bootstrap, topic)
    for alerts, extra in ((f"{topic}-three", ["--replication-factor", "3"]), (f"{topic}-default", [])):
        result = fairstream("run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts, "--until-end", *extra)
        assert result.returncode == 0, result.stderr
        expected = 3 if extra else 1
        for name in (alerts, f"{alerts}.estimates", f"{alerts}.dlq"):
            assert replicas(kafka_bootstrap, name) == [expected]
