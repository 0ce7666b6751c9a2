"""Topics lost under a run end it in one line naming the topic, in bounded time: the input topic deleted under a
tailing run (with and without a recovery store: librdkafka crashes on the broker's answers about it, which the run
survives as the one line), a broker replaced during an `--until-end` read, and a run stopped with SIGTERM once its
topic is gone, which never suggests a resume from a store whose offsets refer to the lost topic."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka.admin import AdminClient

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.broker import LocalBroker
from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.records.errors import ConnectorError
from tests.helpers import wait_until

pytestmark = pytest.mark.kafka


def reading(bootstrap: str) -> bool:
    """Whether the monitor has written estimates: it is past its start and reads its topic."""
    try:
        return any(True for _ in subscribe(bootstrap, "alerts.estimates", poll_seconds=0.1))
    except ConnectorError:
        return False


def monitor(bootstrap: str, *extra: str, spec: str = "compas_equalized_odds") -> subprocess.Popen:
    command = [sys.executable, "-m", "fairstream.cli", "run", spec, "--bootstrap", bootstrap, "--alerts", "alerts", *extra]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def delete_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_topics([topic]).values():
        future.result(30)


def assert_one_line_naming(stderr: str, bootstrap: str, kind: str = "input", topic: str = "decisions") -> None:
    assert stderr.strip().splitlines() == [stderr.strip().splitlines()[-1]], stderr
    assert stderr.startswith(f"error: {kind} topic {topic!r} is gone from Kafka at {bootstrap} (deleted, or the broker replaced"), stderr
    assert "start again without --recovery, or with a new store" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("recovery", [False, True])
def test_an_input_topic_deleted_under_a_tailing_run_ends_it_in_one_line(compas_csv, tmp_path, recovery):
    with LocalBroker() as broker:
        replay(compas_events(compas_csv), broker.bootstrap, "decisions", partitions=2)
        running = monitor(broker.bootstrap, *(["--recovery", str(tmp_path / "store")] if recovery else []))
        wait_until(lambda: reading(broker.bootstrap), "the monitor to write estimates", 60)
        time.sleep(2)
        delete_topic(broker.bootstrap, "decisions")
        started = time.monotonic()
        _, stderr = running.communicate(timeout=90)
        took = time.monotonic() - started
    assert running.returncode == 1 and took < 45, (running.returncode, took, stderr)
    assert_one_line_naming(stderr, broker.bootstrap)


def test_a_broker_replaced_during_an_until_end_read_is_named_within_the_give_up_bound(tmp_path):
    first = LocalBroker().start()
    try:
        replay(hiring_decisions(300_000, 0.5, 0.4, seed=5), first.bootstrap, "decisions")  # long enough to be read for several seconds
        running = monitor(first.bootstrap, "--until-end", "--give-up-after", "30", "--recovery", str(tmp_path / "store"), spec="hiring_demographic_parity")
        wait_until(lambda: reading(first.bootstrap), "the monitor to write estimates", 60)
        running.send_signal(signal.SIGSTOP)  # the read is held where it is while the broker is replaced
    finally:
        first.stop()
    with LocalBroker(port=first.port):  # the same address, none of the topics
        running.send_signal(signal.SIGCONT)
        started = time.monotonic()
        _, stderr = running.communicate(timeout=120)
        took = time.monotonic() - started
    assert running.returncode == 1 and took < 45, (running.returncode, took, stderr)
    assert "is gone from Kafka at" in stderr and "Message timed out" not in stderr and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr


def test_a_run_stopped_once_its_topic_is_gone_suggests_no_resume(compas_csv, tmp_path):
    first = LocalBroker().start()
    try:
        replay(compas_events(compas_csv), first.bootstrap, "decisions")
        running = monitor(first.bootstrap, "--recovery", str(tmp_path / "store"))
        wait_until(lambda: reading(first.bootstrap), "the monitor to write estimates", 60)
        time.sleep(2)
    finally:
        first.stop()
    with LocalBroker(port=first.port):
        time.sleep(1)
        running.send_signal(signal.SIGTERM)
        _, stderr = running.communicate(timeout=90)
    assert "is gone from Kafka at" in stderr and "start again without --recovery" in stderr, stderr
    assert "run it again with --recovery" not in stderr and "Traceback" not in stderr
