"""Windows over raw events and triggers over any value: on the real COMPAS file and on a generated stream with late,
out-of-order and bad records, every estimate's window values and every trigger's raise and clear equal a plain pandas
computation over the events (in (t − over, t] at each evaluation t); the same on one worker and on several; a spec
that names an unknown window, value or group is refused by its place."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fairstream.compiler.load import load_plans
from fairstream.records.errors import SpecError
from fairstream.runner import run_file
from tests.helpers import needs_data, reference_file
from tests.streams import compas_spec, hard_compas_events

WINDOWS = {
    "screens_7d": {"count": "SCREEN", "over": "7d", "by": "race"},
    "score_30d": {"mean": "SCREEN.decile_score", "over": "30d"},
    "score_sum_30d": {"sum": "SCREEN.decile_score", "over": "30d", "by": "sex"},
    "women_max_14d": {"max": "SCREEN.decile_score", "over": "14d", "where": "sex == 'Female'"},
    "low_min_14d": {"min": "SCREEN.decile_score", "over": "14d", "by": "race"},
    "reoffences_30d": {"count": "RECIDIVISM", "over": "30d"},
}
TRIGGERS = [
    {"name": "few-screens", "when": "screens_7d['African-American'] < 20", "message": "fewer than 20 African-American screenings in 7 days"},
    {"name": "tpr-gap", "when": "true_positive_rate.gap > 0.2 and true_positive_rate.trials['Caucasian'] >= 100"},
    {"name": "many-open", "when": "open_trials > 2000"},
]


def read(folder: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (folder / name).read_text().splitlines()]


def windowed_spec(base: dict, path: Path) -> Path:
    spec = {**base, "windows": WINDOWS, "triggers": TRIGGERS}
    path.write_text(yaml.safe_dump(spec))
    return path


def reference(screens: pd.DataFrame, reoffences: pd.DataFrame, instant: pd.Timestamp) -> dict:
    """Every window's value at `instant`, from the events dated in (instant − over, instant]."""

    def span(frame: pd.DataFrame, days: int) -> pd.DataFrame:
        return frame[(frame.time > instant - pd.Timedelta(days=days)) & (frame.time <= instant)]

    def by(values: pd.Series, keys: pd.Series, how: str, seen: set) -> dict:
        grouped = values.groupby(keys).agg(how).to_dict() if len(values) else {}
        return {group: grouped.get(group, 0 if how in ("count", "sum") else None) for group in seen}

    week, month, fortnight = span(screens, 7), span(screens, 30), span(screens, 14)
    women = fortnight[fortnight.sex == "Female"]
    seen = screens[screens.time <= instant]
    return {
        "screens_7d": by(week.decile_score, week.race, "count", set(seen.race)),
        "score_30d": month.decile_score.mean() if len(month) else None,
        "score_sum_30d": by(month.decile_score, month.sex, "sum", set(seen.sex)),
        "women_max_14d": women.decile_score.max() if len(women) else None,
        "low_min_14d": by(fortnight.decile_score, fortnight.race, "min", set(seen.race)),
        "reoffences_30d": len(span(reoffences, 30)),
    }


def assert_windows_match(estimates: list[dict], screens: pd.DataFrame, reoffences: pd.DataFrame) -> None:
    assert estimates
    for record in estimates:
        instant = pd.Timestamp(record["event_time"])
        expected, got = reference(screens, reoffences, instant), record["windows"]
        assert got.keys() == expected.keys()
        for name, value in expected.items():
            assert same(got[name], value), (name, instant, got[name], value)


def same(got: object, expected: object) -> bool:
    """A window's value as pandas gives it: numbers to 1e-9, null where pandas has none, group by group."""
    if isinstance(expected, dict):
        return isinstance(got, dict) and got.keys() == expected.keys() and all(same(got[key], value) for key, value in expected.items())
    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
        return got is None
    return got == pytest.approx(expected, rel=1e-9, abs=1e-9)


def expected_turns(estimates: list[dict], screens: pd.DataFrame) -> list[tuple[str, str]]:
    """(event_time, raised|cleared) of the few-screens trigger, from the pandas count at each evaluation."""
    turns, standing = [], False
    for record in estimates:
        instant = pd.Timestamp(record["event_time"])
        week = screens[(screens.time > instant - pd.Timedelta(days=7)) & (screens.time <= instant) & (screens.race == "African-American")]
        holds = len(week) < 20
        if holds != standing:
            turns.append((record["event_time"], "raised" if holds else "cleared"))
            standing = holds
    return turns


def valid(event: object) -> bool:
    """An event the spec's input section accepts, read from its text: a known kind, an ISO date, the declared fields
    of their types."""
    if not isinstance(event, dict) or event.get("event") not in ("SCREEN", "RECIDIVISM"):
        return False
    try:
        pd.Timestamp(event["date"])
    except ValueError:
        return False
    fields = {"race": str, "sex": str, "age_cat": str, "decile_score": int} if event["event"] == "SCREEN" else {}
    return all(type(event.get(name)) is kind for name, kind in fields.items())


@pytest.fixture(scope="module")
def compas_run(tmp_path_factory) -> tuple[Path, pd.DataFrame, pd.DataFrame]:
    from fairstream.paths import SPECS_DIR

    folder = tmp_path_factory.mktemp("compas-windows")
    base = yaml.safe_load((SPECS_DIR / "compas_equalized_odds.yaml").read_text())
    run_file(windowed_spec(base, folder / "spec.yaml"), reference_file("compas"), folder / "out")
    raw = pd.read_csv(reference_file("compas"), usecols=["id", "race", "sex", "decile_score", "compas_screening_date", "is_recid", "r_offense_date"])
    screens = pd.DataFrame(
        {"id": raw.id, "time": pd.to_datetime(raw.compas_screening_date, utc=True), "race": raw.race, "sex": raw.sex, "decile_score": raw.decile_score}
    )
    recid = raw[(raw.is_recid == 1) & raw.r_offense_date.notna()]
    reoffences = pd.DataFrame({"time": pd.to_datetime(recid.r_offense_date, utc=True)})
    return folder / "out", screens, reoffences


@needs_data("compas")
def test_window_values_on_compas_are_pandas_over_the_events_in_each_span(compas_run):
    out, screens, reoffences = compas_run
    estimates = read(out, "estimates.jsonl")
    assert len(estimates) > 1000
    assert_windows_match(estimates, screens, reoffences)


def open_at(screens: pd.DataFrame, instant: pd.Timestamp) -> int:
    """Trials open at `instant`: each defendant's, from the first screening until 730 days later (trial.close_after)."""
    opened = screens.groupby("id").time.min()
    return int(((opened <= instant) & (opened + pd.Timedelta(days=730) > instant)).sum())


@needs_data("compas")
def test_open_trials_on_compas_are_the_defendants_screened_in_the_last_730_days(compas_run):
    out, screens, _ = compas_run
    estimates = read(out, "estimates.jsonl")
    assert [record["trials"]["open"] for record in estimates] == [open_at(screens, pd.Timestamp(record["event_time"])) for record in estimates]
    assert max(record["trials"]["open"] for record in estimates) > 2000
    turns = [(a["event_time"], a["state"], a["values"]["open_trials"]) for a in read(out, "alerts.jsonl") if a.get("trigger") == "many-open"]
    assert [state for _, state, _ in turns] == ["raised", "cleared"]
    assert turns[0][2] > 2000 >= turns[1][2]


@needs_data("compas")
def test_triggers_on_compas_turn_where_pandas_says_the_condition_turns(compas_run):
    out, screens, _ = compas_run
    estimates = read(out, "estimates.jsonl")
    alerts = read(out, "alerts.jsonl")
    few = [(a["event_time"], a["state"]) for a in alerts if a["type"] == "fairness.trigger" and a["trigger"] == "few-screens"]
    assert few == expected_turns(estimates, screens)
    assert len(few) >= 4  # the count falls below 20 and recovers more than once
    raised = next(a for a in alerts if a["type"] == "fairness.trigger" and a["state"] == "raised")
    assert raised["message"] == "fewer than 20 African-American screenings in 7 days"
    assert raised["values"]["screens_7d['African-American']"] < 20
    by_time = {r["event_time"]: r for r in estimates}
    for alert in (a for a in alerts if a["type"] == "fairness.trigger" and a["trigger"] == "tpr-gap"):
        part = by_time[alert["event_time"]]["parts"]["true_positive_rate"]
        holds = part["gap"] is not None and part["gap"] > 0.2 and part["groups"]["Caucasian"]["trials"] >= 100
        assert holds == (alert["state"] == "raised")
        assert alert["values"] == {"true_positive_rate.gap": part["gap"], "true_positive_rate.trials['Caucasian']": part["groups"]["Caucasian"]["trials"]}


def test_a_generated_stream_gives_pandas_windows_on_one_worker_and_on_several(tmp_path):
    events = hard_compas_events(11, per_day=8, days=260)
    source = tmp_path / "events.jsonl"
    source.write_text("\n".join(json.dumps(event) if isinstance(event, dict) else str(event) for event in events) + "\n")
    base = yaml.safe_load(Path(compas_spec(tmp_path / "base.yaml", window=False)).read_text())
    spec = windowed_spec(base, tmp_path / "spec.yaml")
    run_file(spec, source, tmp_path / "one")
    run_file(spec, source, tmp_path / "several", workers=3)
    estimates = read(tmp_path / "one", "estimates.jsonl")
    alerts = read(tmp_path / "one", "alerts.jsonl")
    assert [(r["event_time"], r["windows"]) for r in estimates] == [(r["event_time"], r["windows"]) for r in read(tmp_path / "several", "estimates.jsonl")]
    assert [a["alert_id"] for a in alerts] == [a["alert_id"] for a in read(tmp_path / "several", "alerts.jsonl")]
    frame = pd.DataFrame([event for event in events if valid(event)])  # a file is read in time order: none is late
    frame["time"] = pd.to_datetime(frame.date, utc=True, format="ISO8601")
    screens = frame[frame.event == "SCREEN"]
    assert_windows_match(estimates, screens, frame[frame.event == "RECIDIVISM"])
    assert [(a["event_time"], a["state"]) for a in alerts if a.get("trigger") == "few-screens"] == expected_turns(estimates, screens)
    assert [record["trials"]["open"] for record in estimates] == [open_at(screens, pd.Timestamp(record["event_time"])) for record in estimates]


@pytest.mark.parametrize(
    ("change", "place", "says"),
    [
        ({"triggers": [{"name": "t", "when": "screens_8d['Caucasian'] < 3"}]}, "triggers -> 0 -> when", "unknown name 'screens_8d'"),
        ({"triggers": [{"name": "t", "when": "false_negative_rate.gap > 0.1"}]}, "triggers -> 0 -> when", "unknown name 'false_negative_rate.gap'"),
        ({"triggers": [{"name": "t", "when": "true_positive_rate.rate['Martian'] > 0.5"}]}, "triggers -> 0 -> when", "unknown group 'Martian'"),
        ({"triggers": [{"name": "t", "when": "screens_7d < 3"}]}, "triggers -> 0 -> when", "holds a number per group"),
        ({"triggers": [{"name": "t", "when": "true_positive_rate.status"}]}, "triggers -> 0 -> when", "must be a bool expression"),
        ({"windows": {"w": {"sum": "SCREEN.race", "over": "7d"}}}, "windows -> w -> sum", "a sum needs an int or float field"),
        ({"windows": {"w": {"count": "ARREST", "over": "7d"}}}, "windows -> w -> count", "unknown event kind 'ARREST'"),
        ({"windows": {"w": {"count": "SCREEN", "over": "7d", "by": "zip"}}}, "windows -> w -> by", "unknown field 'zip'"),
    ],
)
def test_an_unknown_window_value_or_group_is_named_by_its_place(change, place, says):
    from fairstream.paths import SPECS_DIR

    spec = yaml.safe_load((SPECS_DIR / "compas_equalized_odds.yaml").read_text())
    spec["metric"]["groups"] = ["African-American", "Caucasian"]
    spec["windows"] = {"screens_7d": {"count": "SCREEN", "over": "7d", "by": "race"}}
    spec.update(change)
    with pytest.raises(SpecError) as error:
        load_plans([spec])
    text = str(error.value)
    assert place in text and says in text, text


def test_a_window_must_span_whole_evaluation_ticks():
    from fairstream.paths import SPECS_DIR

    spec = yaml.safe_load((SPECS_DIR / "compas_equalized_odds.yaml").read_text())
    spec["evaluate"] = {"every": "2d"}
    spec["windows"] = {"w": {"count": "SCREEN", "over": "7d"}}
    with pytest.raises(SpecError, match=r"windows.w.over must be a whole number of evaluation ticks \(2d\); got 1w"):
        load_plans([spec])


@needs_data("compas")
def test_plot_draws_the_windows_beside_the_fairness_figure(compas_run, tmp_path):
    from matplotlib.image import imread

    from fairstream.report.plot import plot_run, windows_png_of

    out, _, _ = compas_run
    path = plot_run(out, tmp_path / "fairness.png")
    image = imread(windows_png_of(path))
    assert image.shape[:2] == (900, 1600) and image[..., :3].std() > 0.05  # a drawn figure, not a blank page


@needs_data("compas")
def test_trials_evicted_past_max_open_leave_the_open_trials(compas_run, tmp_path):
    """With room for 500 open trials, the newest are evicted: the open count never goes below 0 nor above the trials
    pandas counts open without eviction, and once every kept trial has closed (730 days after the last screening) none
    is open. (A trial whose close a later event of its key has noticed waits for its tick beside the room: the count
    may pass 500 by those.)"""
    from fairstream.paths import SPECS_DIR

    _, screens, _ = compas_run
    base = yaml.safe_load((SPECS_DIR / "compas_equalized_odds.yaml").read_text())
    base["trial"]["max_open"] = 500
    spec = windowed_spec(base, tmp_path / "spec.yaml")
    run_file(spec, reference_file("compas"), tmp_path / "out")
    estimates = read(tmp_path / "out", "estimates.jsonl")
    assert estimates[-1]["trials"]["evicted"] > 1000
    for record in estimates:
        assert 0 <= record["trials"]["open"] <= open_at(screens, pd.Timestamp(record["event_time"]))
    assert max(record["trials"]["open"] for record in estimates) >= 500
    assert estimates[-1]["trials"]["open"] == 0
