"""A real Prometheus (Debian's package) on loopback, scraping a tailing job over COMPAS: what the dashboard and the
alert-rule tests query."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairstream.connectors.broker import free_ports
from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from tests.helpers import wait_until

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
RULES = Path(__file__).parents[2] / "deploy" / "prometheus" / "fairstream.rules.yml"


def query(prometheus: str, expr: str) -> list[dict]:
    url = f"{prometheus}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
    answer = json.loads(urllib.request.urlopen(url, timeout=5).read())
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def alerts(prometheus: str) -> list[dict]:
    answer = json.loads(urllib.request.urlopen(f"{prometheus}/api/v1/alerts", timeout=5).read())
    assert answer["status"] == "success", answer
    return answer["data"]["alerts"]


@contextlib.contextmanager
def monitored_compas(kafka_bootstrap: str, topic: str, compas_csv: Path, tmp_path: Path, *, rules: bool = False) -> Iterator[tuple[str, int]]:
    """A tailing job over COMPAS (and one bad record) with its metrics endpoint, and a Prometheus scraping it every
    second (evaluating the shipped alert rules every second with `rules`); yields Prometheus's URL and the metrics port."""
    if not Path(PROMETHEUS).exists():
        pytest.skip(f"no Prometheus here ({PROMETHEUS}): .ci/run installs Debian's prometheus where apt-get runs as root")
    events = list(compas_events(compas_csv))
    replay([*events, b"{not json"], kafka_bootstrap, topic, partitions=2)
    metrics_port, prometheus_port = free_ports(2)
    job = subprocess.Popen(
        [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "compas_demographic_parity_sex", "--bootstrap", kafka_bootstrap,
         "--topic", topic, "--alerts", f"{topic}-alerts", "--metrics-port", str(metrics_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{"job_name": "fairstream", "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}]}],
    }
    if rules:
        config["rule_files"] = [str(RULES)]
    (tmp_path / "prometheus.yml").write_text(json.dumps(config))
    prometheus = subprocess.Popen(
        [PROMETHEUS, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prometheus_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{prometheus_port}"
    try:
        wait_until(lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=1).status == 200, "Prometheus to start")
        read_all = f"sum(fairstream_events_read_total) == {len(events) + 1}"
        wait_until(lambda: query(url, read_all), "Prometheus to see every event read", timeout=120)
        wait_until(lambda: query(url, "fairstream_gap"), "the first gap", timeout=60)
        yield url, metrics_port
    finally:
        for process in (prometheus, job):
            process.send_signal(signal.SIGTERM)
            process.wait(30)
