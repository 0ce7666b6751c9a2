"""The metrics endpoint of a tailing run: /healthz answers while it runs, /readyz once its partitions are read, and /metrics gives the documented metrics
with the values the run's own records show (events on the topic, dead letters by reason, alerts by type, closed
trials, watermark and verdicts of the latest estimates, no lag once all is read)."""

from __future__ import annotations

import math
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fairstream.connectors.broker import free_port
from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from fairstream.records.timefmt import time_parser
from tests.kafka.outputs import distinct, kafka_outputs

pytestmark = pytest.mark.kafka

MONITORS = ["compas_equalized_odds", "compas_demographic_parity_sex"]


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if not sample.name.endswith("_created")
    }


def test_metrics_match_the_runs_records(kafka_bootstrap, topic, compas_csv):
    events = compas_events(compas_csv)
    replay([*events, b"{not json", b'{"event": "SCREEN"}'], kafka_bootstrap, topic, partitions=2)
    alerts, port = f"{topic}-alerts", free_port()
    monitor = subprocess.Popen(
        [sys.executable, "-m", "fairstream.cli", "run", *MONITORS, "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts, "--metrics-port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline, metrics = time.monotonic() + 90, {}
        while time.monotonic() < deadline:
            time.sleep(1)
            try:
                metrics = scrape(port)
            except OSError:
                continue
            read = sum(value for (name, _), value in metrics.items() if name == "fairstream_events_read_total")
            if read == len(events) + 2 and all(v == 0 for (name, _), v in metrics.items() if name == "fairstream_consumer_lag_messages"):
                time.sleep(7)  # past the idle marker (5 s): the watermark goes as far as it will
                metrics = scrape(port)
                break
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).status == 200
        ready = urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5)  # both partitions assigned and read
        assert (ready.status, ready.read()) == (200, b"ready: 2 input partition(s) assigned and read\n")
        written = kafka_outputs(kafka_bootstrap, alerts)
    finally:
        monitor.send_signal(signal.SIGTERM)
        monitor.communicate(timeout=30)
    assert monitor.returncode == 0

    def value(name: str, **labels: str) -> float:
        return metrics[(name, tuple(sorted(labels.items())))]

    assert sum(v for (name, _), v in metrics.items() if name == "fairstream_events_read_total") == len(events) + 2
    assert Counter({labels[0][1]: v for (name, labels), v in metrics.items() if name == "fairstream_dead_letters_total"}) == Counter(
        letter["reason"] for letter in written["dead_letters"]
    ) == Counter({"not_json": 1, "missing_field": 1})
    alert_counts = Counter((a["monitor"], a["type"]) for a in distinct(written["alerts"]).values())
    assert {(dict(labels)["monitor"], dict(labels)["type"]): v for (name, labels), v in metrics.items() if name == "fairstream_alerts_total"} == alert_counts
    parse = time_parser("iso")
    for name in ("compas-equalized-odds", "compas-demographic-parity-sex"):
        last = [r for r in written["estimates"] if r["monitor"] == name][-1]
        assert value("fairstream_closed_trials", monitor=name) == last["trials"]["closed"]
        assert value("fairstream_watermark_seconds", monitor=name) == parse(last["event_time"]) / 1000
        behind_now = time.time() - parse(last["event_time"]) / 1000  # the delay grows with the wall clock since the scrape
        assert 0 <= behind_now - value("fairstream_watermark_delay_seconds", monitor=name) < 120
        for part, body in last["parts"].items():
            shown = value("fairstream_verdict", monitor=name, part=part)
            assert (math.isnan(shown) and body["violated"] is None) or shown == float(body["violated"])
    open_now = value("fairstream_open_trials", monitor="compas-equalized-odds")
    assert 0 < open_now < 7214 and value("fairstream_open_trials", monitor="compas-demographic-parity-sex") == 0
    with pytest.raises(OSError):  # the endpoint ends with the run
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
