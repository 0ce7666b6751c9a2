"""`fairstream report` on COMPAS with race × sex groups: every race, every sex and every race × sex category with n,
selection rate, impact ratio and Fisher's p-value equal to a pandas computation over the ProPublica file (p-values
summed from the hypergeometric distribution); small categories set apart; trials of unknown category counted; the
page opened in a real headless Chromium shows them."""

from __future__ import annotations

import csv
import html
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import hypergeom

from fairstream.connectors.files import write_jsonl
from fairstream.runner import run_file
from tests.conftest import SPECS
from tests.dashboard.browser import new_browser

LEVELS = {"race": ["race"], "sex": ["sex"], "race-sex": ["race", "sex"]}


@pytest.fixture(scope="module")
def audited(compas_csv, tmp_path_factory) -> Path:
    """A run of the bundled audit spec with every cell published, and its report."""
    tmp = tmp_path_factory.mktemp("audit")
    spec = yaml.safe_load((SPECS / "compas_bias_audit.yaml").read_text())
    spec["publish"] = {"min_cell": 1}
    (tmp / "audit.yaml").write_text(yaml.safe_dump(spec))
    run_file(tmp / "audit.yaml", compas_csv, tmp / "run")
    report(tmp / "run", tmp / "report.html", "--spec", str(tmp / "audit.yaml"))
    return tmp


def report(directory: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "fairstream.cli", "report", str(directory), "--out", str(out), *args], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    return result


def fisher_two_sided(a: int, b: int, c: int, d: int) -> float:
    """Fisher's exact p for [[a, b], [c, d]]: the probability of tables at most as likely as the one seen."""
    law = hypergeom(a + b + c + d, a + c, a + b)
    support = np.arange(max(0, a + b - (b + d)), min(a + b, a + c) + 1)
    probabilities = law.pmf(support)
    return float(min(1.0, probabilities[probabilities <= law.pmf(a) * (1 + 1e-7)].sum()))


def expected_rows(compas: pd.DataFrame, columns: list[str]) -> dict[str, dict]:
    people = compas.assign(category=compas[columns].astype(str).agg(" & ".join, axis=1), selected=compas.decile_score <= 4)
    counts = people.groupby("category").agg(n=("selected", "size"), selected=("selected", "sum"))
    counts["rate"] = counts.selected / counts.n
    counts["share"] = counts.n / counts.n.sum()
    compared = counts[counts.share >= 0.02]
    top = compared.rate.idxmax()
    rows = {}
    for category, row in counts.iterrows():
        ratio = p = None
        if row.share >= 0.02:
            ratio = row.rate / compared.rate[top]
            if category != top:
                p = fisher_two_sided(int(row.selected), int(row.n - row.selected), int(compared.selected[top]), int(compared.n[top] - compared.selected[top]))
        rows[category] = {"n": int(row.n), "selected": int(row.selected), "rate": row.rate, "share": row.share, "impact_ratio": ratio, "p_value": p}
    return rows


def number(text: str) -> float | None:
    return None if text == "" else float(text)


@pytest.mark.parametrize("level", LEVELS)
def test_each_levels_table_equals_pandas(audited, compas_csv, level):
    compas = pd.read_csv(compas_csv)
    expected = expected_rows(compas, LEVELS[level])
    with (audited / "report_tables" / f"compas-bias-audit__selection-rate__{level}.csv").open() as handle:
        got = {row["category"]: row for row in csv.DictReader(handle)}
    assert got.keys() == expected.keys()
    for category, row in expected.items():
        assert (int(got[category]["n"]), int(got[category]["selected"])) == (row["n"], row["selected"]), category
        for name in ("rate", "share", "impact_ratio", "p_value"):
            found = number(got[category][name])
            assert (found is None) if row[name] is None else found == pytest.approx(row[name], rel=1e-9, abs=1e-300), (category, name)
        assert (got[category]["note"] == "under the share") == (row["share"] < 0.02)


def test_the_page_shows_the_tables_in_a_real_browser(audited, compas_csv):
    browser = new_browser()
    try:
        browser.get((audited / "report.html").as_uri())
        text = browser.find_element("tag name", "body").text
        png = browser.get_screenshot_as_png()
    finally:
        browser.quit()
    compas = pd.read_csv(compas_csv)
    race = expected_rows(compas, ["race"])
    for category in ("African-American", "Caucasian", "Female", "Male", "African-American & Male", "Native American & Female"):
        assert category in text
    assert f"{race['African-American']['n']:,}" in text and f"{race['African-American']['impact_ratio']:.3f}" in text
    assert "Record integrity: verified" in text and "First valid detection" in text and "sha256" in text
    assert "under 2 % of trials" in text
    pixels = np.frombuffer(png, dtype=np.uint8)
    assert len(png) > 50_000 and len(np.unique(pixels)) > 200  # drawn: tables, badges and the timeline figure


def test_cells_under_min_cell_stay_suppressed_and_each_attribute_counts_its_own_trials(compas_csv, tmp_path):
    run = run_file(SPECS / "compas_bias_audit.yaml", compas_csv, tmp_path / "run")  # the bundled spec: publish.min_cell 10
    result = report(tmp_path / "run", tmp_path / "report.html")
    with (tmp_path / "report_tables" / "compas-bias-audit__selection-rate__race-sex.csv").open() as handle:
        suppressed = {row["category"] for row in csv.DictReader(handle) if row["note"] == "suppressed"}
    compas = pd.read_csv(compas_csv)
    sizes = compas.groupby(["race", "sex"]).size()
    assert suppressed == {f"{race} & {sex}" for (race, sex), n in sizes.items() if n < 10} and suppressed
    assert "compas-bias-audit: 3 table(s)" in result.stdout  # the bundled spec found by its sha256, without --spec
    assert "spec text not shown" not in result.stdout
    for level, columns in (("race", ["race"]), ("sex", ["sex"])):  # each attribute counted from its own trials, none left out
        expected = expected_rows(compas, columns)
        with (tmp_path / "report_tables" / f"compas-bias-audit__selection-rate__{level}.csv").open() as handle:
            got = {row["category"]: row for row in csv.DictReader(handle)}
        assert {category: (int(row["n"]), int(row["selected"])) for category, row in got.items()} == {
            category: (row["n"], row["selected"]) for category, row in expected.items()
        }
        for category, row in expected.items():
            assert (number(got[category]["p_value"]) is None) if row["p_value"] is None else number(got[category]["p_value"]) == pytest.approx(row["p_value"], rel=1e-9)
    page = (tmp_path / "report.html").read_text()
    assert "intersection(s) with fewer trials than publish.min_cell are suppressed" not in page
    screened = pd.to_datetime(compas.compas_screening_date)  # the decisions' period: the screenings, not the evaluations
    estimates = run.read("estimates.jsonl")
    counted_by = next(record["event_time"] for record in estimates if record["trials"]["closed"] == len(compas))  # each closes a day after its screening
    assert pd.Timestamp(counted_by) - pd.Timedelta(days=1) >= screened.max().tz_localize("UTC") > pd.Timestamp(counted_by) - pd.Timedelta(days=8)
    assert f"from the first decision, {screened.min():%Y-%m-%d}T00:00:00Z, to the evaluation of {counted_by}, by which the last trial" in page


def test_names_ratio_pair_and_stale_tables(compas_csv, tmp_path):
    """Attributes are named by the spec's variables even without the spec; a ratio part's timeline says ratio and its
    table names the pair the timeline draws; a rerun removes the tables it no longer writes."""
    spec = yaml.safe_load((SPECS / "compas_bias_audit.yaml").read_text())
    spec["monitor"] = "own-audit"
    (tmp_path / "own.yaml").write_text(yaml.safe_dump(spec))
    run = run_file(tmp_path / "own.yaml", compas_csv, tmp_path / "run")
    (tmp_path / "report_tables").mkdir()
    stale = tmp_path / "report_tables" / "old-monitor__selection-rate__attribute-1.csv"
    stale.write_text("left from an earlier report")
    result = report(tmp_path / "run", tmp_path / "report.html")
    assert "spec text not shown" in result.stdout and not stale.exists()
    tables = sorted(path.name for path in (tmp_path / "report_tables").glob("*.csv"))
    assert tables == [f"own-audit__selection-rate__{level}.csv" for level in ("race-sex", "race", "sex")]
    page = (tmp_path / "report.html").read_text()
    assert "<th>raw ratio</th>" in page and "<th>gap</th>" not in page
    last = run.read("estimates.jsonl")[-1]["parts"]["selection_rate"]
    high, low = last["pair"]
    assert html.escape(f"the verdict names {high} vs {low} (raw ratio {last['raw_ratio']:.4f}); the timeline draws this pair") in page


def test_trials_of_unknown_category_are_counted(tmp_path):
    """Sex arrives on a later event that some defendants never get: their trials have no category."""
    rng = np.random.default_rng(5)
    events = []
    for person in range(400):
        events.append({"event": "SCREEN", "id": str(person), "date": f"2024-01-{1 + person % 28:02d}", "race": ["a", "b"][person % 2], "decile_score": int(rng.integers(1, 11))})
        if rng.random() < 0.9:
            events.append({"event": "PROFILE", "id": str(person), "date": f"2024-01-{1 + person % 28:02d}", "sex": ["F", "M"][int(rng.integers(0, 2))]})
    events.sort(key=lambda event: event["date"])
    write_jsonl(tmp_path / "events.jsonl", events)
    spec = yaml.safe_load((SPECS / "compas_bias_audit.yaml").read_text())
    spec["input"]["kinds"] = {"SCREEN": {"race": "str", "decile_score": "int"}, "PROFILE": {"sex": "str"}}
    spec["variables"]["race"] = {"first": "SCREEN", "field": "race"}
    spec["variables"]["sex"] = {"first": "PROFILE", "field": "sex"}
    spec["dead_letters"] = {"redact": ["race", "sex"]}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    run_file(tmp_path / "spec.yaml", tmp_path / "events.jsonl", tmp_path / "run")
    report(tmp_path / "run", tmp_path / "report.html", "--spec", str(tmp_path / "spec.yaml"))
    without_sex = len({event["id"] for event in events}) - sum(event["event"] == "PROFILE" for event in events)
    assert f"{without_sex:,} trial(s) without a needed value" in (tmp_path / "report.html").read_text()


def test_a_spec_that_is_not_the_runs_is_refused(audited):
    result = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "report", str(audited / "run"), "--out", str(audited / "other.html"), "--spec", "compas_equalized_odds"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1
    assert "not the spec of this run" in result.stderr and result.stderr.count("\n") == 1


def test_the_report_says_which_version_produced_the_records_and_from_which_spec(audited):
    from importlib.metadata import version

    page = (audited / "report.html").read_text()
    records = [json.loads(line) for line in (audited / "run" / "estimates.jsonl").read_text().splitlines()]
    assert f"<dt>produced by</dt><dd>fairstream {version('fairstream')}</dd>" in page
    assert f"<dt>spec sha256</dt><dd>{records[-1]['chain']['spec']}</dd>" in page
    table = json.loads(next((audited / "report_tables").glob("*.json")).read_text())
    assert table["produced_by"] == [version("fairstream")] and table["spec_sha256"] == records[-1]["chain"]["spec"]
