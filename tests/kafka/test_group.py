"""`fairstream run --group`: real member processes on the local broker. A member SIGKILLed mid-run, two others started;
they take its partitions and the merge over from the group's topics, and the alerts and estimates equal the file run's
(a record written twice is the same record: `verify` counts it, never a break)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, TopicPartition

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import estimates_topic
from fairstream.connectors.replay import replay
from fairstream.runner import run_file
from tests.conftest import SPECS

pytestmark = pytest.mark.kafka
SPEC = SPECS / "compas_equalized_odds.yaml"
MEMBER_ENV = {**os.environ, "FAIRSTREAM_KAFKA_SESSION_TIMEOUT_MS": "6000"}
"""A short session: a new group's first join waits about half of it, and a killed member's partitions move after it."""


def without_emitted_at(records):
    return [{key: value for key, value in record.items() if key != "emitted_at"} for record in records]


def member(bootstrap: str, topic: str, group: str, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "fairstream.cli", "run", str(SPEC), "--bootstrap", bootstrap, "--topic", topic, "--alerts", f"{topic}-alerts", "--group", group, *extra]
    return subprocess.Popen(command, env=MEMBER_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_steps(bootstrap: str, group: str, count: int, timeout: float = 90.0) -> None:
    """Return once the group's steps topic holds `count` steps (the member has folded some of its partitions)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{group}-watch", "enable.auto.commit": False, "logger": None})
    deadline = time.monotonic() + timeout
    seen = 0
    try:
        consumer.assign([TopicPartition(f"{group}.steps", 0, 0)])
        while seen < count:
            assert time.monotonic() < deadline, f"only {seen} step(s) written in {timeout:.0f} s"
            seen += sum(1 for message in consumer.consume(100, 0.1) if message.error() is None)
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def file_records(compas_csv, tmp_path_factory):
    run = run_file(SPEC, compas_csv, tmp_path_factory.mktemp("file"))
    return without_emitted_at(run.read("alerts.jsonl")), without_emitted_at(run.read("estimates.jsonl"))


@pytest.mark.parametrize("snapshot_every", ["0.2", "600"])
def test_a_member_killed_mid_run_leaves_the_records_of_the_file_run(kafka_bootstrap, topic, compas_csv, file_records, snapshot_every):
    """`snapshot_every` 600: the killed member wrote no checkpoint, so its partitions are re-read from their steps alone."""
    events = compas_events(compas_csv)
    half = len(events) // 2
    replay(events[:half], kafka_bootstrap, topic, partitions=3)
    group = f"{topic}-group"
    first = member(kafka_bootstrap, topic, group, "--snapshot-every", snapshot_every)
    others: list[subprocess.Popen] = []
    try:
        wait_for_steps(kafka_bootstrap, group, 3)
        time.sleep(0.3)
        first.send_signal(signal.SIGKILL)
        first.wait()
        replay(events[half:], kafka_bootstrap, topic, partitions=3)  # the rest comes after the kill
        others = [member(kafka_bootstrap, topic, group, "--until-end", "--snapshot-every", "0.5") for _ in range(2)]
        outputs = [process.communicate(timeout=240) for process in others]
    finally:
        for process in [first, *others]:
            if process.poll() is None:
                process.kill()
    for process, (_out, err) in zip(others, outputs):
        assert process.returncode == 0, err[-2000:]
    summaries = " ".join(out for out, _err in outputs)
    taken = sum(int(line.split("took ")[1].split(" partition")[0]) for line in summaries.splitlines() if "member of consumer group" in line)
    assert taken >= 1, summaries[-1500:]  # the killed member's partitions went on from what it wrote
    file_alerts, file_estimates = file_records
    alerts = f"{topic}-alerts"
    assert without_emitted_at(subscribe(kafka_bootstrap, alerts, poll_seconds=0.5)) == file_alerts
    assert without_emitted_at(subscribe(kafka_bootstrap, estimates_topic(alerts), poll_seconds=0.5)) == file_estimates
    checked = subprocess.run([sys.executable, "-m", "fairstream.cli", "verify", "--bootstrap", kafka_bootstrap, "--alerts", alerts], capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "closed by its seal" in checked.stdout


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (["--input", "x.jsonl"], "--group reads a Kafka topic"),
        (["--bootstrap", "127.0.0.1:1", "--processes", "2"], "start more members instead"),
        (["--bootstrap", "127.0.0.1:1", "--recovery", "store"], "leave out --recovery"),
    ],
)
def test_what_a_member_cannot_do_is_refused_in_one_line(tmp_path, arguments, says):
    (tmp_path / "x.jsonl").write_text("{}\n")
    done = subprocess.run([sys.executable, "-m", "fairstream.cli", "run", str(SPEC), "--group", "g", *arguments], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_group_belongs_to_one_job(kafka_bootstrap, topic, compas_csv):
    replay(compas_events(compas_csv)[:200], kafka_bootstrap, topic, partitions=2)
    group = f"{topic}-group"
    first = member(kafka_bootstrap, topic, group, "--until-end")
    _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err[-2000:]
    other = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", str(SPECS / "compas_demographic_parity_sex.yaml"), "--bootstrap", kafka_bootstrap, "--topic", topic, "--group", group, "--until-end"],
        env=MEMBER_ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert other.returncode == 2, other.stdout + other.stderr
    assert "holds the checkpoints of another job" in other.stderr and len(other.stderr.strip().splitlines()) == 1, other.stderr
