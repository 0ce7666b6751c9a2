"""`fairstream run` on every metric type: exit 0, and a summary whose first violations are the dates of the monitor's own
violation alerts, whatever the verdict mode (point, confident, anytime) and whether the gap or the ratio is tested."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import numpy as np
import orjson
import pytest
import yaml
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.language.metric import MetricType
from tests.cli.test_run_cli import ENV, table_rows

METRICS = {
    "demographic_parity": {"prediction": "approved"},
    "conditional_statistical_parity": {"prediction": "approved", "condition": "region"},
    "equal_opportunity": {"prediction": "approved", "label": "qualified"},
    "equalized_odds": {"prediction": "approved", "label": "qualified"},
    "predictive_parity": {"prediction": "approved", "label": "qualified"},
    "disparate_impact": {"prediction": "approved", "threshold": 0.8},
    "delayed_impact": {"outcome": "repaid"},
    "benefit_rate": {"supply": "granted", "demand": "asked", "discount": 0.99},
    "scoring_rate": {"score": "granted"},
}
FIELDS = {"group": "str", "region": "str", "approved": "bool", "qualified": "bool", "repaid": "float", "granted": "float", "asked": "float"}


def test_the_table_covers_every_metric_type():
    assert set(METRICS) == set(typing.get_args(MetricType))


@pytest.fixture(scope="module")
def loans(tmp_path_factory) -> Path:
    """Two groups over 17 days, an event every 12 minutes: group b qualified and approved less often, repaying and granted less."""
    rng = np.random.default_rng(20)
    rows = []
    for index in range(2000):
        group = "a" if index % 2 else "b"
        qualified = bool(rng.random() < (0.7 if group == "a" else 0.4))
        rows.append(
            {
                "event": "LOAN", "id": str(index), "time": f"2024-01-{1 + index // 120:02d}T{index % 120 // 5:02d}:{index % 5 * 12:02d}:00Z",
                "group": group, "region": "north" if rng.random() < 0.5 else "south", "qualified": qualified,
                "approved": bool(rng.random() < (0.7 if group == "a" else 0.4) + (0.2 if qualified else 0)),
                "repaid": float(rng.beta(5, 2) if group == "a" else rng.beta(2, 2)),
                "granted": float(rng.integers(3 if group == "a" else 0, 10)), "asked": float(rng.integers(5, 10)),
            }
        )  # fmt: skip
    path = tmp_path_factory.mktemp("loans") / "loans.jsonl"
    path.write_bytes(b"".join(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE) for row in rows))
    return path


def write_spec(folder: Path, metric_type: str, verdict: str) -> Path:
    metric = {"type": metric_type, "group": "group", "threshold": 0.1, **METRICS[metric_type]}
    spec = {
        "monitor": f"loans-{metric_type}",
        "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"LOAN": FIELDS}},
        "trial": {"close_on": ["LOAN"]},
        "variables": {name: {"first": "LOAN", "field": name} for name in FIELDS},
        "metric": metric,
        "estimator": {"prior": 0.5, "confidence": 0, "verdict": verdict, **({"outcome_range": [0, 1]} if metric_type == "delayed_impact" else {})},
        "evaluate": {"every": "1d"},
    }
    path = folder / f"{metric_type}-{verdict}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def first_alerts(out: Path) -> dict[str, tuple[str, list[str]]]:
    """Per part, the date and pair of its first violation alert."""
    firsts: dict[str, tuple[str, list[str]]] = {}
    for line in (out / "alerts.jsonl").read_bytes().splitlines():
        alert = orjson.loads(line)
        if alert["type"] == "fairness.violation":
            if "pair" in alert:
                names = alert["pair"]
            else:  # a constraint: the higher of τ and the group first
                tau = f"τ {alert['tau']:.4g}"
                names = [tau, alert["group"]] if alert["constraint"]["direction"] == "at_least" else [alert["group"], tau]
            firsts.setdefault(alert["part"], (alert["event_time"][:10], names))
    return firsts


def first_rows(output: str, parts: set[str]) -> dict[str, tuple[str, list[str]]]:
    """Per part, the first row of the summary's first-violation table: (date, [higher, lower])."""
    firsts: dict[str, tuple[str, list[str]]] = {}
    for row in table_rows(output):
        if row[0] in parts and len(row) >= 5 and re.fullmatch(r"\d{4}-\d\d-\d\d", row[3]):
            firsts.setdefault(row[0], (row[3], row[1:3]))
    return firsts


def run_and_compare(spec: Path, data: Path, out: Path) -> dict[str, tuple[str, list[str]]]:
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(data), "--out", str(out)], env=ENV)
    assert result.exit_code == 0, result.output + repr(result.exception)
    alerts = first_alerts(out)
    assert first_rows(result.stdout, set(alerts) | {"mean_outcome", "benefit_rate"}) == alerts
    return alerts


@pytest.mark.parametrize("metric_type", list(METRICS))
def test_every_metric_type_runs_and_its_summary_follows_the_alerts(metric_type, loans, tmp_path):
    alerts = run_and_compare(write_spec(tmp_path, metric_type, "point"), loans, tmp_path / "out")
    assert alerts, f"the stream is unfair to group b: {metric_type} should alert"


@pytest.mark.parametrize(("metric_type", "verdict"), [("equalized_odds", "confident"), ("equalized_odds", "anytime"), ("disparate_impact", "confident"), ("delayed_impact", "confident"), ("delayed_impact", "anytime"), ("scoring_rate", "confident")])
def test_confident_and_anytime_summaries_follow_the_alerts(metric_type, verdict, loans, tmp_path):
    assert run_and_compare(write_spec(tmp_path, metric_type, verdict), loans, tmp_path / "out")


@pytest.mark.parametrize("spec", ["compas_equalized_odds_confident", "compas_equalized_odds_anytime", "compas_disparate_impact"])
def test_bundled_compas_specs_print_their_alert_dates(spec, specs_dir: Path, compas_csv: Path, tmp_path):
    """A confident or anytime verdict alerts later than the point gap first crosses ε: the summary says when it alerted."""
    assert run_and_compare(specs_dir / f"{spec}.yaml", compas_csv, tmp_path / "out")


def test_delayed_impact_constraints_summary_follows_the_alerts(loans, tmp_path):
    """ELF constraints instead of a gap: one row per part and group not certified, on the day its alert fired."""
    spec = write_spec(tmp_path, "delayed_impact", "point")
    body = yaml.safe_load(spec.read_text())
    del body["metric"]["threshold"]
    body["metric"]["constraints"] = [{"tau": 0.6, "delta": 0.05}, {"tau": 0.3, "direction": "at_most", "delta": 0.1}]
    spec.write_text(yaml.safe_dump(body))
    alerts = run_and_compare(spec, loans, tmp_path / "out")
    assert set(alerts) == {"mean_outcome>=0.6", "mean_outcome<=0.3"}
