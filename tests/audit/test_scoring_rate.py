"""The scoring rate of NYC Local Law 144 on COMPAS decile scores: each race × sex category's share scoring above the
median of every score, as pandas computes it over the ProPublica file, at the end of the run and at every evaluation
(the median moving as scores arrive); a fixed median counts as a selection rate at that cut; the report's scoring
rate table equals pandas; anytime verdicts against a running median are refused with the reason."""

from __future__ import annotations

import csv
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from fairstream.connectors.compas import compas_events
from fairstream.runner import run_file
from tests.conftest import SPECS


def scoring_spec(path, **metric):
    spec = yaml.safe_load((SPECS / "compas_bias_audit.yaml").read_text())
    spec["monitor"] = "compas-scoring-rate"
    spec["variables"]["score"] = {"first": "SCREEN", "field": "decile_score"}
    spec["metric"] = {"type": "scoring_rate", "group": ["race", "sex"], "score": "score", "threshold": 0.2, **metric}
    spec["estimator"] = {"verdict": "confident", "alpha": 0.05}
    spec["evaluate"] = {"every": "30d"}
    spec["publish"] = {"min_cell": 1}
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture(scope="module")
def scored(compas_csv, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scoring")
    run = run_file(scoring_spec(tmp / "spec.yaml"), compas_csv, tmp / "run")
    return tmp, run.read("estimates.jsonl")


def test_every_evaluation_counts_the_share_above_the_median_so_far(scored, compas_csv):
    _, estimates = scored
    screenings = pd.DataFrame([event for event in compas_events(compas_csv) if event["event"] == "SCREEN"])
    screenings["closed"] = pd.to_datetime(screenings.date, utc=True) + pd.Timedelta(days=1)
    for record in estimates[:: max(1, len(estimates) // 12)] + estimates[-1:]:
        counted = screenings[screenings.closed <= pd.Timestamp(record["event_time"])]
        part = record["parts"]["scoring_rate"]
        median = counted.decile_score.median()
        assert part["median"] == median
        above = counted.assign(above=counted.decile_score > median, category=counted.race + " & " + counted.sex).groupby("category").above
        expected = {category: (int(hits), int(trials)) for category, (hits, trials) in above.agg(["sum", "size"]).iterrows()}
        assert {group: (cell["hits"], cell["trials"]) for group, cell in part["groups"].items()} == expected, record["event_time"]


def test_a_fixed_median_counts_the_scores_above_it(compas_csv, tmp_path):
    estimates = run_file(scoring_spec(tmp_path / "spec.yaml", median=6), compas_csv, tmp_path / "run").read("estimates.jsonl")
    compas = pd.read_csv(compas_csv)
    above = compas.assign(above=compas.decile_score > 6, category=compas.race + " & " + compas.sex).groupby("category").above.agg(["sum", "size"])
    part = estimates[-1]["parts"]["scoring_rate"]
    assert part["median"] == 6
    assert {group: (cell["hits"], cell["trials"]) for group, cell in part["groups"].items()} == {c: (int(h), int(n)) for c, (h, n) in above.iterrows()}


def test_the_reports_scoring_rate_table_equals_pandas(scored, compas_csv):
    tmp, _ = scored
    result = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "report", str(tmp / "run"), "--out", str(tmp / "report.html"), "--spec", str(tmp / "spec.yaml")],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    compas = pd.read_csv(compas_csv)
    median = compas.decile_score.median()
    by_race = compas.assign(above=compas.decile_score > median).groupby("race").above.agg(["sum", "size"])
    with (tmp / "report_tables" / "compas-scoring-rate__scoring-rate__race.csv").open() as handle:
        rows = {row["category"]: row for row in csv.DictReader(handle)}
    assert {race: (int(row["selected"]), int(row["n"])) for race, row in rows.items()} == {race: (int(h), int(n)) for race, (h, n) in by_race.iterrows()}
    assert f"above {median:g}, the median score" in (tmp / "report.html").read_text()


def test_anytime_verdicts_against_a_running_median_are_refused(tmp_path):
    spec = yaml.safe_load(scoring_spec(tmp_path / "spec.yaml").read_text())
    spec["estimator"] = {"verdict": "anytime"}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = subprocess.run([sys.executable, "-m", "fairstream.cli", "spec", "check", str(tmp_path / "spec.yaml")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "give metric.median" in result.stderr
