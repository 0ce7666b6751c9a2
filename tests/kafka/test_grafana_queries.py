"""The Grafana dashboard's every PromQL query, answered by a real Prometheus (Debian's package, started here on
loopback) scraping a running job: each returns series, and the gap Prometheus stored is the one the job serves."""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import wait_until
from tests.kafka.prometheus import monitored_compas, query

pytestmark = pytest.mark.kafka

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


def test_the_dashboard_imports_into_any_grafana_and_queries_documented_metrics():
    """As Grafana's own exported dashboards: an `__inputs` data source the import asks for, a data source variable
    every panel and query names (provisioning picks the default Prometheus), no fixed data source uid."""
    text = DASHBOARD.read_text()
    board = json.loads(text)
    assert [(entry["name"], entry["type"], entry["pluginId"]) for entry in board["__inputs"]] == [("DS_PROMETHEUS", "datasource", "prometheus")]
    variable = next(item for item in board["templating"]["list"] if item["type"] == "datasource")
    assert variable["name"] == "datasource" and variable["query"] == "prometheus" and variable["current"]["value"] == "${DS_PROMETHEUS}"
    named = re.findall(r'"uid": "([^"]*)"', text)
    assert set(named) == {board["uid"], "${datasource}"}, set(named)
    documented = (Path(__file__).parents[2] / "docs" / "observability.md").read_text()
    for panel in board["panels"]:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert {panel["type"]} <= {entry["id"] for entry in board["__requires"]}
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"]
            for name in set(re.findall(r"fairstream_[a-z_]+", target["expr"])):
                assert f"`{name}`" in documented or f"`{name.removesuffix('_total')}" in documented, name


@pytest.fixture
def monitored(kafka_bootstrap, topic, compas_csv, tmp_path):
    with monitored_compas(kafka_bootstrap, topic, compas_csv, tmp_path) as running:
        yield running


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
