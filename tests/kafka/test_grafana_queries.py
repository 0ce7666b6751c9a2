"""The Grafana dashboard's every PromQL query, answered by a real Prometheus (Debian's package, started here on
loopback) scraping a running job: each returns series, and the gap Prometheus stored is the one the job serves."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fairstream.connectors.broker import free_ports
from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from tests.helpers import wait_until

pytestmark = pytest.mark.kafka

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "dashboards" / "fairstream.json"
GRAFANA_VARIABLES = {"$__rate_interval": "30s", '"$monitor"': '".*"'}
"""What Grafana puts in place of the dashboard's variables: a rate window of a few scrapes, every monitor."""


def dashboard_queries() -> list[tuple[str, str]]:
    board = json.loads(DASHBOARD.read_text())
    return [(panel["title"], target["expr"]) for panel in board["panels"] for target in panel["targets"]]


def as_grafana_sends(expr: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    assert "$" not in expr, f"a variable the test does not fill: {expr}"
    return expr


def query(prometheus: str, expr: str) -> list[dict]:
    url = f"{prometheus}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
    answer = json.loads(urllib.request.urlopen(url, timeout=5).read())
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def test_the_dashboards_panels_name_the_provisioned_data_source_and_documented_metrics():
    board = json.loads(DASHBOARD.read_text())
    provisioned = (DASHBOARD.parents[1] / "provisioning" / "datasources" / "prometheus.yml").read_text()
    documented = (Path(__file__).parents[2] / "docs" / "observability.md").read_text()
    for panel in board["panels"]:
        assert f"uid: {panel['datasource']['uid']}" in provisioned
        for target in panel["targets"]:
            for name in set(re.findall(r"fairstream_[a-z_]+", target["expr"])):
                assert f"`{name}`" in documented or f"`{name.removesuffix('_total')}" in documented, name


@pytest.fixture
def monitored(kafka_bootstrap, topic, compas_csv, tmp_path):
    """A tailing job over COMPAS (and one bad record) with its metrics endpoint, and a Prometheus scraping it every second."""
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
    config = tmp_path / "prometheus.yml"
    config.write_text(json.dumps({
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [{"job_name": "fairstream", "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}]}],
    }))  # fmt: skip
    prometheus = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prometheus_port}"],
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


def test_every_dashboard_query_returns_series_from_a_running_job(monitored):
    prometheus, metrics_port = monitored
    wait_until(lambda: query(prometheus, "count(count_over_time(fairstream_gap[1m]) >= 5)"), "a few scrapes of the gaps", timeout=60)
    for title, expr in dashboard_queries():
        assert query(prometheus, as_grafana_sends(expr)), f"panel {title!r}: no series for {expr}"
    served = text_string_to_metric_families(urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode())
    gaps = {(s.labels["monitor"], s.labels["part"]): s.value for family in served for s in family.samples if s.name == "fairstream_gap"}
    stored = {(r["metric"]["monitor"], r["metric"]["part"]): float(r["value"][1]) for r in query(prometheus, "fairstream_gap")}
    assert stored.keys() == gaps.keys() and len(gaps) >= 2
    assert all(stored[key] == pytest.approx(gaps[key], nan_ok=True) for key in gaps)  # the job has read everything: the gaps hold still
