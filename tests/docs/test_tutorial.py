"""The tutorial works as written: its commands, run in a folder holding the COMPAS file, print what the page shows,
and the rates and the first violations it names are those a plain pandas computation over the CSV gives."""

from __future__ import annotations

import json
import shlex

import pandas as pd
import pytest

from tests.docs.markdown import ROOT, blocks, normalized, shell_lines
from tests.docs.test_examples import fairstream

PAGE = (ROOT / "docs" / "tutorial.md").read_text()
GROUPS = ("African-American", "Caucasian")


@pytest.fixture(scope="module")
def folder(compas_csv, tmp_path_factory):
    """The tutorial's folder after steps 1 to 6: the CSV, the spec, the point run and its plot, each command's output."""
    here = tmp_path_factory.mktemp("tutorial")
    (here / "compas-scores-two-years.csv").symlink_to(compas_csv)
    (here / "my_monitor.yaml").write_text(blocks(PAGE, "yaml")[0])
    printed = {}
    for block in blocks(PAGE, "bash"):
        for line in shell_lines(block):
            if line.startswith("fairstream ") and "out-anytime" not in line:
                result = fairstream(*shlex.split(line)[1:], cwd=here)
                assert result.returncode == 0, f"{line}: {result.stderr}"
                printed[line] = result.stdout + result.stderr
    return here, printed


def shown_after(command: str) -> list[str]:
    """The lines of the console block that follows the bash block running `command`."""
    start = PAGE.index(command)
    after = PAGE[PAGE.index("```\n", start) + 4 :]  # past the end of the command's own block
    block = blocks(after, "")[0]
    return [normalized(line) for line in block.splitlines() if line.strip()]


def references(compas_csv) -> tuple[dict[tuple[str, str], tuple[int, int]], dict[str, str]]:
    """From the CSV with pandas: each part's hits and trials per group at the end, and the first screening date at
    which each part's gap of plain rates exceeds 0.1 with both groups at 100 trials or more (the default floor)."""
    rows = pd.read_csv(compas_csv, usecols=["id", "compas_screening_date", "race", "score_text", "two_year_recid"])
    rows = rows[rows.race.isin(GROUPS)].sort_values("compas_screening_date")
    rows["high_risk"] = rows.score_text != "Low"
    parts = {"true_positive_rate": rows[rows.two_year_recid == 1], "false_positive_rate": rows[rows.two_year_recid == 0]}
    final, first = {}, {}
    for part, subset in parts.items():
        for group in GROUPS:
            members = subset[subset.race == group]
            final[(part, group)] = (int(members.high_risk.sum()), len(members))
        daily = subset.groupby(["compas_screening_date", "race"]).high_risk.agg(["sum", "count"]).unstack(fill_value=0).cumsum()
        rates = daily["sum"] / daily["count"]
        judged = (daily["count"][list(GROUPS)] >= 100).all(axis=1)
        gaps = (rates[GROUPS[0]] - rates[GROUPS[1]]).abs()
        first[part] = gaps[judged & (gaps > 0.1)].index[0]
    return final, first


def test_each_step_prints_what_the_tutorial_shows(folder):
    _, printed = folder
    for command, output in printed.items():
        if "spec check" in command or "fairstream run" in command:
            lines = {normalized(line) for line in output.splitlines()}
            assert [line for line in shown_after(command) if line not in lines] == [], command
    assert (folder[0] / "out" / "fairness.png").stat().st_size > 10_000


def test_the_rates_and_first_violations_shown_are_pandas(folder, compas_csv):
    final, first = references(compas_csv)
    shown = shown_after("fairstream run my_monitor.yaml --input compas-scores-two-years.csv --format csv --out out")
    for (part, group), (hits, trials) in final.items():
        assert f"{part} {group} {hits / trials:.4f} {hits} {trials}" in shown
    alerts = [json.loads(line) for line in (folder[0] / "out" / "alerts.jsonl").read_text().splitlines()]
    assert {alert["part"]: alert["event_time"][:10] for alert in alerts} == first
    assert all(alert["type"] == "fairness.violation" and tuple(alert["pair"]) == GROUPS for alert in alerts)
    first_fpr = next(alert for alert in alerts if alert["part"] == "false_positive_rate")
    assert [first_fpr["groups"][group]["trials"] for group in GROUPS] == [128, 103]  # the page's "128 and 103 defendants"
    assert "128 and 103" in PAGE


def test_the_anytime_step_alerts_later_as_the_page_shows(folder):
    here, _ = folder
    spec = here / "my_monitor-anytime.yaml"
    spec.write_text(blocks(PAGE, "yaml")[0] + blocks(PAGE, "yaml")[1])
    command = "fairstream run my_monitor.yaml --input compas-scores-two-years.csv --format csv --out out-anytime"
    result = fairstream("run", spec.name, *shlex.split(command)[3:], cwd=here)
    assert result.returncode == 0, result.stderr
    lines = {normalized(line) for line in result.stdout.splitlines()}
    assert [line for line in shown_after(command) if line not in lines] == []
