"""A tailing monitor stopped with SIGTERM exits 0 with one line and leaves its open trials in the recovery store: the
run resumed from it, after the rest of the events arrive, ends with every alert and estimate of an uninterrupted run."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import estimates_topic
from fairstream.connectors.replay import replay
from fairstream.records.errors import ConnectorError
from fairstream.runner import run_file
from tests.conftest import SPECS
from tests.kafka.outputs import distinct, kafka_outputs, without_emitted_at

pytestmark = pytest.mark.kafka


def estimates_so_far(bootstrap: str, alerts: str) -> int:
    try:
        return sum(1 for _ in subscribe(bootstrap, estimates_topic(alerts), distinct=False, poll_seconds=0.1))
    except ConnectorError:
        return 0


def test_sigterm_stops_a_tailing_run_cleanly_and_the_resumed_run_loses_nothing(kafka_bootstrap, topic, compas_csv, tmp_path):
    events = compas_events(compas_csv)
    cut = len(events) * 19 // 20  # events are in time order: by then the first trials (screened in 2013) have closed
    replay(events[:cut], kafka_bootstrap, topic, partitions=2)
    alerts, recovery = f"{topic}-alerts", tmp_path / "recovery"
    command = [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap,
               "--topic", topic, "--alerts", alerts, "--recovery", str(recovery), "--snapshot-every", "0.5"]  # fmt: skip
    tailing = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while estimates_so_far(kafka_bootstrap, alerts) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert tailing.poll() is None, "the tailing run ended by itself"
    tailing.send_signal(signal.SIGTERM)
    started = time.monotonic()
    _, stderr = tailing.communicate(timeout=30)
    assert tailing.returncode == 0 and time.monotonic() - started < 15
    assert stderr.strip().splitlines() == [
        f"stopped on SIGTERM: every record read so far is processed and written; run it again with --recovery {recovery} to go on from here"
    ]
    written = kafka_outputs(kafka_bootstrap, alerts)
    assert written["estimates"], "the stopped run wrote nothing: stop it later"

    replay(events[cut:], kafka_bootstrap, topic, partitions=2)
    resumed = subprocess.run([*command, "--until-end"], capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr

    expected = run_file(SPECS / "compas_equalized_odds.yaml", compas_csv, tmp_path / "file")
    got = kafka_outputs(kafka_bootstrap, alerts)
    for family in ("alerts", "estimates"):
        assert list(distinct(got[family]).values()) == without_emitted_at(expected.read(f"{family}.jsonl")), family


def test_sigterm_ends_following_alerts_with_exit_code_0(kafka_bootstrap, topic):
    """`fairstream alerts --follow` stops on SIGTERM as on Ctrl-C, exit 0, as `fairstream run` does."""
    replay([{"id": "1", "date": "2014-01-01", "event": "SCREEN"}], kafka_bootstrap, topic, partitions=1)
    command = [sys.executable, "-m", "fairstream.cli", "alerts", "--bootstrap", kafka_bootstrap, "--topic", topic, "--follow"]
    following = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    assert following.poll() is None, following.communicate()
    following.send_signal(signal.SIGTERM)
    _, stderr = following.communicate(timeout=15)
    assert following.returncode == 0, stderr
