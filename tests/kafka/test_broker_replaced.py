"""Broker faults end in a sentence, not a hang: a broker replaced by a fresh one (topics lost) stops a tailing run with
one line naming the lost topic; SIGTERM stops a run whose output waits on a broker that does not answer within 10 s,
with exit code 3 and the number of records not delivered."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

from fairstream.connectors.broker import LocalBroker, free_port
from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import ensure_topics
from fairstream.connectors.replay import replay
from tests.kafka.test_own_records import topics_on

pytestmark = pytest.mark.kafka


def wait_until(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_a_broker_replaced_by_a_fresh_one_stops_a_tailing_run_in_one_line(compas_csv, tmp_path):
    first = LocalBroker().start()
    try:
        replay(compas_events(compas_csv)[:3000], first.bootstrap, "decisions")
        command = [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--bootstrap", first.bootstrap, "--recovery", str(tmp_path / "store")]
        tailing = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_until(lambda: "fairness-alerts.estimates" in topics_on(first.bootstrap))
        time.sleep(2)
    finally:
        first.stop()
    with LocalBroker(port=first.port):  # the same address, none of the topics
        _, stderr = tailing.communicate(timeout=60)
    assert tailing.returncode == 1
    assert stderr.splitlines() == [stderr.splitlines()[0]]
    assert stderr.startswith(f"error: input topic 'decisions' is gone from Kafka at {first.bootstrap} (deleted, or the broker replaced")
    assert "Traceback" not in stderr


def ready(port: int) -> bool:
    """Whether the job's /readyz says ready: its sink holds its producer id and its partitions are read."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


def test_sigterm_stops_a_run_whose_output_waits_within_10_s_naming_what_was_not_delivered(compas_csv, tmp_path):
    port = free_port()
    with LocalBroker() as source, LocalBroker() as sink:
        ensure_topics(source.bootstrap, {"decisions": 1})
        script = textwrap.dedent(f"""
            from fairstream.cli import console
            from fairstream.cli.console import reports_errors
            from fairstream.runner import Job, KafkaInput, KafkaOutput, execute

            console.show_warnings()
            job = Job(spec="compas_equalized_odds", input=KafkaInput(bootstrap={source.bootstrap!r}, topics=["decisions"]),
                      output=KafkaOutput(bootstrap={sink.bootstrap!r}, alerts="alerts"), recovery={str(tmp_path / "store")!r}, metrics_port={port})
            reports_errors(lambda: execute(job, own_process=True))()
        """)
        running = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_until(lambda: ready(port))
        sink.process.send_signal(signal.SIGSTOP)  # the output broker stops answering
        try:
            replay(compas_events(compas_csv), source.bootstrap, "decisions")
            time.sleep(3)
            assert running.poll() is None
            running.send_signal(signal.SIGTERM)
            started = time.monotonic()
            _, stderr = running.communicate(timeout=30)
            took = time.monotonic() - started
        finally:
            sink.process.send_signal(signal.SIGCONT)
    assert running.returncode == 3 and took < 10, stderr
    (line,) = stderr.splitlines()
    assert line.startswith("error: stopped with ") and f"output record(s) not acknowledged by Kafka at {sink.bootstrap}" in line
    assert "Traceback" not in stderr
