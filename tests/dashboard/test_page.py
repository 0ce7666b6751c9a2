"""`fairstream dashboard` in a real headless Chromium: a COMPAS run's output shows its groups, the threshold and both
alerts, and follows records written after the page loaded; a shield run shows its fairness value and flips; a
directory that is not a run's output is one sentence on the page and one line on stderr; 10⁴ evaluations draw."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.runner import run_file
from tests.conftest import SPECS
from tests.dashboard.browser import alert_ids, dashboard, new_browser, page_error, status, texts, wait_for


@pytest.fixture(scope="module")
def browser():
    driver = new_browser()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def compas_run(compas_csv, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compas") / "out"
    run_file(SPECS / "compas_equalized_odds.yaml", compas_csv, out)
    return out


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def legend(browser) -> list[str]:
    return texts(browser, ".legendtext")


def test_a_compas_run_shows_its_groups_threshold_and_alerts_and_follows_new_records(browser, compas_run, compas_csv, tmp_path):
    estimates, alerts = lines(compas_run / "estimates.jsonl"), lines(compas_run / "alerts.jsonl")
    first_alert_time = json.loads(alerts[0])["event_time"]
    early = [line for line in estimates if json.loads(line)["event_time"] <= first_alert_time]
    live = tmp_path / "live"
    live.mkdir()
    (live / "estimates.jsonl").write_text("".join(early))
    (live / "alerts.jsonl").write_text(alerts[0])
    (live / "dead_letters.jsonl").write_text("")
    with dashboard(str(live)) as served:
        browser.get(served.url)
        wait_for(browser, lambda b: alert_ids(b), what="the first alert")
        assert alert_ids(browser) == [json.loads(alerts[0])["alert_id"]]
        races = set(pd.read_csv(compas_csv, usecols=["race"]).race)
        wait_for(browser, lambda b: races | {"threshold"} <= {entry.split(" (n=")[0] for entry in legend(b)}, what="every race and the threshold in the legend")
        spec_threshold = yaml.safe_load((SPECS / "compas_equalized_odds.yaml").read_text())["metric"]["threshold"]
        drawn = browser.execute_script(
            "return [...document.querySelectorAll('[id^=gap-]')].map(d => d.data.find(t => t.name === 'threshold').y[0])"
        )
        assert drawn == [spec_threshold, spec_threshold]
        assert f"{len(early)} evaluations" in status(browser)

        with (live / "estimates.jsonl").open("a") as handle:  # the rest, the last line written in two parts
            handle.write("".join(estimates[len(early) : -1]) + estimates[-1][:40])
            handle.flush()
            with (live / "alerts.jsonl").open("a") as more:
                more.write("".join(alerts[1:]))
            handle.write(estimates[-1][40:])
        wait_for(browser, lambda b: len(alert_ids(b)) == len(alerts) and f"{len(estimates)} evaluations" in status(b), what="the records written later")
        assert alert_ids(browser) == [json.loads(line)["alert_id"] for line in alerts]
        assert len(alerts) == 2
        second = json.loads(alerts[1])
        served_alert = json.loads(urllib.request.urlopen(served.url + f"api/alerts/{second['alert_id']}").read())
        assert served_alert == second
        link = browser.execute_script(f"return document.querySelector('tr[data-alert-id=\"{second['alert_id']}\"] a').getAttribute('href')")
        assert link == f"/api/alerts/{second['alert_id']}"


def test_a_directory_that_is_not_a_runs_output_is_one_sentence_on_the_page_and_on_stderr(browser, tmp_path):
    with dashboard(str(tmp_path)) as served:
        browser.get(served.url)
        message = wait_for(browser, page_error, what="the error sentence")
        assert message == f"{tmp_path} is not the output of a fairstream run: it holds none of estimates.jsonl, alerts.jsonl, dead_letters.jsonl"
        stderr = served.stderr()
    assert stderr == f"error: {message}\n"


def test_a_shield_run_shows_its_fairness_value_targets_and_interventions(browser, tmp_path):
    decisions = tmp_path / "hiring.jsonl"
    write_jsonl(decisions, hiring_decisions(3000, p_male=0.6, p_female=0.3, seed=2))
    out = tmp_path / "out"
    from click.testing import CliRunner

    from fairstream.cli import cli

    result = CliRunner().invoke(cli, ["shield", "run", str(SPECS / "hiring_energy_shield.yaml"), "--input", str(decisions), "--out", str(out)])
    assert result.exit_code == 0, result.output
    flips = [json.loads(line) for line in lines(out / "alerts.jsonl") if '"shield.intervention"' in line]
    statuses = [json.loads(line) for line in lines(out / "estimates.jsonl") if '"shield.status"' in line]
    assert flips and len(statuses) == 3000 // 100
    shield = yaml.safe_load((SPECS / "hiring_energy_shield.yaml").read_text())["shield"]
    with dashboard(str(out)) as served:
        browser.get(served.url)
        title = wait_for(browser, lambda b: texts(b, ".shield .gtitle"), what="the shield panel")[0]
        assert title == f"fairness value and interventions ({len(flips)} so far)"
        shown = legend(browser)
        assert f"running target S [{shield['running'][0]}, {shield['running'][1]}]" in shown
        assert f"limit target L [{shield['limit'][0]}, {shield['limit'][1]}]" in shown
        drawn = browser.execute_script("return document.querySelector('.shield .plot').data[0].y")
        assert drawn == pytest.approx([status["fairness"] for status in statuses])


def test_ten_thousand_evaluations_of_six_groups_in_two_parts_are_thinned_and_drawn(browser, tmp_path):
    groups = ["a", "b", "c", "d", "e", "f"]
    records = []
    for day in range(10_000):
        time = (pd.Timestamp("2000-01-01", tz="UTC") + pd.Timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%SZ")
        parts = {
            part: {
                "groups": {g: {"estimate": 0.3 + 0.02 * i + 0.01 * ((day // 50) % 3), "hits": day, "trials": 2 * day + 10} for i, g in enumerate(groups)},
                "gap": 0.1 + 0.01 * ((day // 50) % 3), "ratio": 0.7, "pair": ["f", "a"], "threshold": 0.11, "violated": (day // 50) % 3 == 2, "clear": (day // 50) % 3 == 0,
            }
            for part in ("true_positive_rate", "false_positive_rate")
        }  # fmt: skip
        records.append({"alert_id": f"e{day}", "monitor": "big", "type": "fairness.estimate", "event_time": time, "metric": "equalized_odds",
                        "verdict": "point", "prior": 0.5, "confidence": 100, "trials": {"closed": day, "incomplete": 0}, "parts": parts})  # fmt: skip
    write_jsonl(tmp_path / "estimates.jsonl", records)
    with dashboard(str(tmp_path), "--max-points", "1500") as served:
        browser.get(served.url)
        drawn = "return [...document.querySelectorAll('[id^=gap-]')].filter(d => d.data && d.data.length).length"
        wait_for(browser, lambda b: "10000 evaluations" in status(b) and b.execute_script(drawn) == 2, timeout=60, what="the drawn page")
        lengths = browser.execute_script("return [...document.querySelectorAll('[id^=estimates-]')].flatMap(d => d.data.map(t => t.x.length))")
        assert len(lengths) == 2 * len(groups) and max(lengths) <= 1500
        periods = json.loads(urllib.request.urlopen(served.url + "api/snapshot").read())["monitors"][0]["parts"][0]["violated_periods"]
        expected = [[records[start]["event_time"], records[min(start + 50, 9999)]["event_time"]] for start in range(100, 10_000, 150)]
        assert periods == expected


def test_each_parts_status_and_certified_stretches_show_on_the_page(browser, compas_csv, tmp_path):
    """Demographic parity by sex on COMPAS at ε = 0.15 with confident verdicts is certified (the raw gap is 0.08); the
    page shows the part's status as the last estimate has it, shades the stretches it was certified and lists the
    certification records."""
    spec = yaml.safe_load((SPECS / "compas_demographic_parity_sex.yaml").read_text())
    spec["metric"]["threshold"] = 0.15
    spec["estimator"]["verdict"] = "confident"
    (tmp_path / "sex.yaml").write_text(yaml.safe_dump(spec))
    out = tmp_path / "out"
    run_file(tmp_path / "sex.yaml", compas_csv, out)
    last = json.loads(lines(out / "estimates.jsonl")[-1])["parts"]["selection_rate"]
    records = [json.loads(line) for line in lines(out / "alerts.jsonl")]
    assert last["status"] == "certified" and records[0]["type"] == "fairness.certified"
    with dashboard(str(out)) as served:
        browser.get(served.url)
        shown = wait_for(browser, lambda b: texts(b, ".part-status .status"), what="the part's status")
        assert shown == ["certified"]
        shades = browser.execute_script("return document.querySelector('[id^=gap-]').layout.shapes.map(s => s.fillcolor)")
        assert shades.count("rgba(0, 114, 178, 0.12)") == sum(record["type"] == "fairness.certified" for record in records)
        rows = browser.execute_script("return [...document.querySelectorAll('table.alerts tbody tr')].map(r => r.className)")
        assert rows == [record["type"].removeprefix("fairness.") for record in records]
        assert "certified now: selection_rate" in texts(browser, ".summary")[0]


def test_a_change_shows_in_the_alerts_list_and_as_a_star_at_its_change_point(browser, tmp_path):
    from tests.test_change_verdicts import run, write

    alerts = run(tmp_path, write(tmp_path / "moves.jsonl", 1, change_at=5000))
    (change,) = [alert for alert in alerts if alert["type"] == "fairness.changed"]
    with dashboard(str(tmp_path / "out")) as served:
        browser.get(served.url)
        wait_for(browser, lambda b: change["alert_id"] in alert_ids(b), what="the change in the alerts list")
        row = browser.execute_script(f"return [...document.querySelectorAll('tr[data-alert-id=\"{change['alert_id']}\"] td')].map(td => td.textContent)")
        assert row[:4] == [change["changed_at"], "changed", "selection_rate", "a vs b"]
        assert "change point" in legend(browser)
        star = browser.execute_script("return document.querySelector('[id^=gap-]').data.find(t => t.name === 'change point').x")
        assert star == [change["changed_at"]]


def test_a_merged_alarm_shows_in_the_summary_the_alerts_list_and_at_the_threshold(browser, tmp_path):
    from tests.test_merged_alarm import run, write

    (merged,) = [alert for alert in run(tmp_path, write(tmp_path / "many.jsonl", "many", 5, 12_000)) if alert["type"] == "fairness.violated_somewhere"]
    with dashboard(str(tmp_path / "out")) as served:
        browser.get(served.url)
        wait_for(browser, lambda b: merged["alert_id"] in alert_ids(b), what="the merged alarm in the alerts list")
        row = browser.execute_script(f"return [...document.querySelectorAll('tr[data-alert-id=\"{merged['alert_id']}\"] td')].map(td => td.textContent)")
        leaning = merged["pooled"][0]["leaning_on"][0]["pair"]
        assert row[:4] == [merged["event_time"], "violated_somewhere", "selection_rate", f"{leaning[0]} vs {leaning[1]}"]
        assert f"violated somewhere since {merged['event_time']}" in texts(browser, ".summary")[0]
        cross = browser.execute_script("return document.querySelector('[id^=gap-]').data.find(t => (t.name || '').startsWith('violated somewhere')).y")
        assert cross == [0.1]


def test_a_job_alarm_shows_in_the_jobs_alerts_list(browser, tmp_path):
    from tests.test_merged_alarm import job_specs, write

    specs = job_specs(tmp_path / "specs")
    run_file(specs, write(tmp_path / "many.jsonl", "many", 5, 12_000), tmp_path / "out")
    (job,) = [json.loads(line) for line in lines(tmp_path / "out" / "alerts.jsonl") if '"fairness.job_violated_somewhere"' in line]
    with dashboard(str(tmp_path / "out")) as served:
        browser.get(served.url)
        wait_for(browser, lambda b: job["alert_id"] in alert_ids(b), what="the job alarm in the alerts list")
        row = browser.execute_script(f"return [...document.querySelectorAll('tr[data-alert-id=\"{job['alert_id']}\"] td')].map(td => td.textContent)")
        assert row[:2] == [job["event_time"], "job_violated_somewhere"]


def test_windows_over_raw_events_are_drawn_with_the_stretches_a_trigger_stood_raised(browser, compas_csv, tmp_path):
    from tests.test_event_windows import windowed_spec

    spec = windowed_spec(yaml.safe_load((SPECS / "compas_equalized_odds.yaml").read_text()), tmp_path / "spec.yaml")
    out = tmp_path / "out"
    run_file(spec, compas_csv, out)
    estimates = [json.loads(line) for line in lines(out / "estimates.jsonl")]
    turns = [json.loads(line) for line in lines(out / "alerts.jsonl") if '"fairness.trigger"' in line]
    with dashboard(str(out)) as served:
        browser.get(served.url)
        wait_for(browser, lambda b: texts(b, ".window .gtitle"), what="the window panels")
        panel = "document.querySelector('.window[data-window=\"screens_7d\"] .plot')"
        drawn = browser.execute_script(f"return {panel}.data.filter(t => t.x[0] !== null).map(t => [t.name, t.y])")
        assert dict(drawn)["African-American"] == [record["windows"]["screens_7d"]["African-American"] for record in estimates]
        shaded = browser.execute_script(f"return {panel}.layout.shapes.map(s => [s.x0, s.x1])")
        few = [turn for turn in turns if turn["trigger"] == "few-screens"]
        starts = [turn["event_time"] for turn in few if turn["state"] == "raised"]
        assert [start for start, _ in shaded][: len(starts)] == starts
        assert "trigger few-screens raised" in legend(browser)
