"""Faults on the Kafka path, injected for real: the monitor killed with SIGKILL at random moments and right after its
snapshots, the broker frozen mid-run, a slow reader of the alert topic, a broker that does not acknowledge. After
each, the de-duplicated records equal an uninterrupted run's, every repeat is an exact copy, nothing is missing, and
the records' hash chains verify with the repeats as duplicates."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from fairstream.audit.sources import topic_records
from fairstream.audit.verify import verify_chains
from fairstream.connectors.alerts import subscribe
from fairstream.connectors.broker import LocalBroker, free_port
from fairstream.connectors.kafka import estimates_topic, kafka_sink, record_encoder
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.connectors.replay import replay
from fairstream.records.errors import ConnectorError
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
from tests.conftest import SPECS
from tests.helpers import wait_until
from tests.kafka.outputs import distinct, kafka_outputs, position_free, seal_records
from tests.streams import compas_spec, hard_compas_events

pytestmark = pytest.mark.kafka


class Scenario:
    """A topic of hard-case events, the uninterrupted run's records over it, and a monitor command to disturb."""

    def __init__(self, bootstrap: str, tmp_path: Path, name: str, *, per_day: int, partitions: int = 4):
        self.bootstrap = bootstrap
        self.tmp_path = tmp_path
        self.spec = compas_spec(tmp_path / "spec.yaml")
        self.topic = f"{name}-events"
        replay(hard_compas_events(seed=11, per_day=per_day), bootstrap, self.topic, partitions=partitions)
        reference = f"{name}-reference"
        execute(Job(spec=self.spec, input=KafkaInput(bootstrap=bootstrap, topics=[self.topic], tail=False), output=KafkaOutput(bootstrap=bootstrap, alerts=reference)))
        self.expected = kafka_outputs(bootstrap, reference)
        self.alerts = f"{name}-alerts"

    def command(self, recovery: Path | None = None) -> list[str]:
        command = [sys.executable, "-m", "fairstream.cli", "run", self.spec, "--bootstrap", self.bootstrap, "--topic", self.topic, "--alerts", self.alerts, "--until-end"]
        return command + (["--recovery", str(recovery), "--snapshot-every", "0.2"] if recovery else [])

    def start(self, recovery: Path | None = None) -> subprocess.Popen:
        return subprocess.Popen(self.command(recovery), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)

    def estimates_so_far(self) -> int:
        try:
            return sum(1 for _ in subscribe(self.bootstrap, estimates_topic(self.alerts), poll_seconds=0.1, distinct=False))
        except ConnectorError:
            return 0

    def assert_nothing_lost(self) -> dict[str, int]:
        """The run's records, de-duplicated by id, equal the reference's; returns how many repeats each family had."""
        got = kafka_outputs(self.bootstrap, self.alerts)
        repeats = {}
        for family in ("alerts", "estimates", "dead_letters"):
            expected, produced = distinct(self.expected[family]), distinct(got[family])
            assert produced.keys() == expected.keys(), f"{family}: {len(expected.keys() - produced.keys())} missing, {len(produced.keys() - expected.keys())} unexpected"
            assert produced == expected, family
            repeats[family] = len(got[family]) - len(produced)
        assert position_free(got["dead_letters"]) >= position_free(self.expected["dead_letters"])
        seals = seal_records(self.bootstrap, self.alerts)  # a checkpoint written after the last snapshot is repeated too
        chains = verify_chains(topic_records(self.bootstrap, self.alerts))  # repeats are duplicates of their chain, not breaks
        assert chains.intact and chains.duplicates == sum(repeats.values()) + len(seals) - len(distinct(seals)), chains.breaks[:3]
        return repeats


def kill(process: subprocess.Popen) -> bool:
    """SIGKILL the monitor's whole process group; whether it was still running."""
    running = process.poll() is None
    if running:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return running


def finish(process: subprocess.Popen, timeout: float = 600) -> None:
    _, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err.decode()[-2000:]


def kill_at_random_moments(scenario: Scenario, kills: int, seed: int) -> int:
    """Start the monitor and SIGKILL it at a random moment of its first 4 s (while it starts, connects, reads, or
    snapshots); `kills` times, then let it finish. Returns the kills that hit a running monitor."""
    rng = random.Random(seed)
    recovery = scenario.tmp_path / "recovery"
    hits = 0
    for _ in range(kills):
        process = scenario.start(recovery)
        time.sleep(rng.uniform(1.0, 4.0))
        hits += kill(process)
    finish(scenario.start(recovery))
    return hits


def kill_while_reading(scenario: Scenario, kills: int, seed: int) -> int:
    """Start the monitor and SIGKILL it once its first estimates are out (a restart finds earlier runs' at once), at a
    random moment of the half second after; `kills` times, then let it finish. Returns the kills that hit a running
    monitor."""
    rng = random.Random(seed)
    recovery = scenario.tmp_path / "recovery"
    hits = 0
    for _ in range(kills):
        process = scenario.start(recovery)
        wait_until(lambda started=process: scenario.estimates_so_far() > 0 or started.poll() is not None, "the first estimates", timeout=120)
        time.sleep(rng.uniform(0.0, 0.5))
        hits += kill(process)
    finish(scenario.start(recovery))
    return hits


@pytest.mark.timeout(900)  # five starts of the monitor on a loaded 2-core machine: what it checks does not depend on speed
def test_killed_four_times_at_random_moments_loses_nothing(kafka_bootstrap, tmp_path):
    scenario = Scenario(kafka_bootstrap, tmp_path, f"kill3-{tmp_path.name}", per_day=800)
    assert kill_at_random_moments(scenario, kills=4, seed=1) >= 3, "the monitor finished before it could be killed; use a longer stream"
    scenario.assert_nothing_lost()


@pytest.mark.slow
def test_killed_twelve_times_at_random_moments_loses_nothing(kafka_bootstrap, tmp_path):
    scenario = Scenario(kafka_bootstrap, tmp_path, f"kill7-{tmp_path.name}", per_day=250)
    assert kill_at_random_moments(scenario, kills=12, seed=2) >= 10
    scenario.assert_nothing_lost()


def commit_epoch(recovery: Path) -> int | None:
    """The epoch the recovery store would resume from now (None before the first commit)."""
    try:
        with sqlite3.connect(f"file:{recovery / 'part-0.sqlite3'}?mode=ro", uri=True, timeout=0.05) as db:
            row = db.execute("SELECT max(commit_epoch) FROM commits").fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def test_killed_right_after_snapshots_loses_nothing(kafka_bootstrap, tmp_path):
    """Outputs of an epoch are acknowledged before its snapshot counts: a kill the moment a snapshot is committed repeats, never loses."""
    scenario = Scenario(kafka_bootstrap, tmp_path, f"snapkill-{tmp_path.name}", per_day=250)
    recovery = tmp_path / "recovery"
    hits = 0
    for round_ in range(3):
        process = scenario.start(recovery)
        seen = commit_epoch(recovery)
        commits = 0
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:  # let a few snapshots pass, then kill on the next
            epoch = commit_epoch(recovery)
            if epoch is not None and epoch != seen:
                seen, commits = epoch, commits + 1
                if commits == 2 + round_:
                    break
            time.sleep(0.002)
        hits += kill(process)
    finish(scenario.start(recovery))
    assert hits >= 2
    scenario.assert_nothing_lost()


def test_a_frozen_broker_is_ridden_out(tmp_path):
    """The broker stops answering for 20 s while the monitor reads (SIGSTOP: a network partition that loses nothing);
    the monitor waits and finishes with the same records."""
    with LocalBroker() as broker:
        scenario = Scenario(broker.bootstrap, tmp_path, "freeze", per_day=250)
        port = free_port()
        process = subprocess.Popen([*scenario.command(), "--metrics-port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while events_read(port) == 0 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.poll() is None, "the monitor finished before the broker could be frozen"
        os.kill(broker.process.pid, signal.SIGSTOP)
        try:
            time.sleep(20)
            assert process.poll() is None, f"the monitor gave up while the broker was frozen: {process.communicate()[1].decode()[-2000:]}"
        finally:
            os.kill(broker.process.pid, signal.SIGCONT)
        finish(process)
        repeats = scenario.assert_nothing_lost()
        assert repeats == {"alerts": 0, "estimates": 0, "dead_letters": 0}


def events_read(port: int) -> float:
    """What the monitor's metrics say it has read so far (0 before its endpoint answers)."""
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1).read().decode()
    except OSError:
        return 0
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith("fairstream_events_read_total{"))


def test_a_slow_reader_of_the_alert_topic_gets_everything(kafka_bootstrap, tmp_path):
    """A subscriber that takes 2 ms per record follows the topics while the monitor writes them, and ends with every record."""
    scenario = Scenario(kafka_bootstrap, tmp_path, f"slow-{tmp_path.name}", per_day=30)
    expected = len(distinct(scenario.expected["estimates"]))
    read: list[dict] = []

    def follow() -> None:
        for record in subscribe(kafka_bootstrap, estimates_topic(scenario.alerts), follow=True, poll_seconds=0.2):
            time.sleep(0.002)
            read.append(record)
            if len(read) == expected:
                return

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    finish(scenario.start())
    reader.join(timeout=120)
    assert not reader.is_alive(), f"the slow reader got {len(read)} of {expected} estimates"
    assert distinct(read) == distinct(scenario.expected["estimates"])
    scenario.assert_nothing_lost()


def test_a_record_the_broker_does_not_acknowledge_stops_the_sink(tmp_path):
    """Undelivered output is an error, never a silent drop: the sink raises rather than letting the epoch (and its snapshot) pass."""
    with LocalBroker() as broker:
        sink = kafka_sink(KafkaConnection(bootstrap=broker.bootstrap, properties={"message.timeout.ms": "1500"}), "alerts").build("write", 0, 1)
        encode = record_encoder("alerts")
        sink.write_batch([encode({"type": "fairness.violation", "monitor": "m", "alert_id": "1"})])  # reaches the broker
        os.kill(broker.process.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(ConnectorError, match="did not take 1 record"):
                sink.write_batch([encode({"type": "fairness.violation", "monitor": "m", "alert_id": "2"})])
            assert time.monotonic() - started < 15
        finally:
            os.kill(broker.process.pid, signal.SIGCONT)


def test_a_tailing_monitor_says_when_the_broker_is_gone_and_gives_up_when_told(tmp_path):
    """The broker dies under a tailing monitor: a warning within 30 s, repeated while it lasts, and with
    --give-up-after one error line and exit code 1 instead of retrying forever."""
    from connectors.replay import EventFields
    from connectors.synthetic.hiring import hiring_decisions

    broker = LocalBroker().start()
    try:
        replay(hiring_decisions(200, 0.5, 0.5, seed=1), broker.bootstrap, "decisions", fields=EventFields("id", "time"))
        command = [
            sys.executable, "-m", "fairstream.cli", "run", str(SPECS / "hiring_demographic_parity.yaml"), "--bootstrap", broker.bootstrap,
            "--topic", "decisions", "--alerts", "alerts", "--give-up-after", "10",
        ]  # fmt: skip
        monitor = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        lines: list[tuple[float, str]] = []
        reader = threading.Thread(target=lambda: lines.extend((time.monotonic(), line) for line in monitor.stderr), daemon=True)
        reader.start()
        time.sleep(12)  # started, read the topic, past the idle marker: tailing a quiet topic when the broker goes
        assert monitor.poll() is None
        broker.process.kill()
        killed = time.monotonic()
        assert monitor.wait(timeout=120) == 1
        reader.join(timeout=10)
    finally:
        broker.stop()
    ours = [(at, line.strip()) for at, line in lines if line.startswith(("warning:", "error:"))]
    assert ours and ours[0][1].startswith(f"warning: Kafka at {broker.bootstrap} does not answer") and ours[0][0] - killed < 30, ours
    assert ours[-1][1].startswith(f"error: Kafka at {broker.bootstrap} has not answered for") and "giving up" in ours[-1][1], ours


def test_a_record_over_the_producers_size_limit_is_one_line_naming_its_size(kafka_bootstrap):
    """librdkafka refuses a record over message.max.bytes before sending it: the sink says so in one line, not a traceback."""
    sink = kafka_sink(KafkaConnection(bootstrap=kafka_bootstrap, properties={"message.max.bytes": "10000"}), "alerts").build("write", 0, 1)
    encode = record_encoder("alerts")
    with pytest.raises(ConnectorError, match=r"cannot produce a record of [\d,]+ bytes to 'alerts\.estimates': .*") as caught:
        sink.write_batch([encode({"type": "fairness.estimate", "monitor": "m", "alert_id": "1", "padding": "x" * 20_000})])
    assert "\n" not in str(caught.value)
