"""The COMPAS equalized-odds monitor agrees, tick by tick, with a batch computation written in pandas from the spec's semantics."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from fairstream.runner import run_file

PRIOR = 0.5
CONFIDENCE = 100
THRESHOLD = 0.1
CLOSE_AFTER = pd.Timedelta(days=730)
PARTS = {"true_positive_rate": True, "false_positive_rate": False}
"""Each part of equalized odds and the value of `reoffended` its trials have."""
PAIR = ["African-American", "Caucasian"]
FLOOR = 100
"""The bundled specs' evidence floor (the default for point verdicts at ε = 0.1: ⌈1/ε²⌉ trials): a group with fewer
trials in a part is shown but takes no part in the gap."""
MIN_CELL = 10
"""The bundled specs' small-cell rule (the default `publish.min_cell`): a smaller cell is published without its numbers."""

CUTS: dict[str, Callable[[pd.Series], pd.Series]] = {
    "compas_equalized_odds.yaml": lambda score: score > 6,
    "compas_equalized_odds_propublica.yaml": lambda score: score >= 5,
}
"""Per bundled spec, its notion of high risk, written again here from the spec's text."""


# ---------------------------------------------------------------------------------------------
# The reference: plain pandas over the ProPublica file, independent of the monitor's code.
# ---------------------------------------------------------------------------------------------


def compas_trials(csv_path: Path, high_risk: Callable[[pd.Series], pd.Series]) -> pd.DataFrame:
    """One row per defendant: race, high_risk, reoffended (a new offence 0..730 days after screening) and the close time."""
    raw = pd.read_csv(csv_path, usecols=["id", "race", "decile_score", "is_recid", "compas_screening_date", "r_offense_date"])
    screened = pd.to_datetime(raw["compas_screening_date"], format="%Y-%m-%d")
    offence = pd.to_datetime(raw["r_offense_date"], format="%Y-%m-%d")
    days_after = (offence - screened).dt.days
    return pd.DataFrame(
        {
            "id": raw["id"].astype(str),
            "race": raw["race"],
            "high_risk": high_risk(raw["decile_score"]).astype(bool),
            "reoffended": (raw["is_recid"] == 1) & days_after.between(0, 730),
            "closes": screened + CLOSE_AFTER,
        }
    )


def published(hits: int, trials: int) -> tuple[int | None, int | None, bool]:
    """(hits, trials, suppressed) as a record may show a cell: a cell of fewer than MIN_CELL trials shows neither count."""
    return (hits, trials, False) if trials >= MIN_CELL else (None, None, True)


def shown(cell: dict[str, Any]) -> tuple[int | None, int | None, bool]:
    return cell["hits"], cell["trials"], cell.get("suppressed", False)


def map_estimate(hits: int, trials: int, confidence: float = CONFIDENCE) -> float:
    return (hits + PRIOR * confidence) / (trials + confidence)


def final_counts(trials: pd.DataFrame) -> dict[str, dict[str, tuple[int, int]]]:
    """Per part and group: (hits, trials) over every defendant."""
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    for part, label in PARTS.items():
        chosen = trials[trials["reoffended"] == label]
        grouped = chosen.groupby("race")["high_risk"].agg(["sum", "size"])
        counts[part] = {race: (int(row["sum"]), int(row["size"])) for race, row in grouped.iterrows()}
    return counts


def ticks_of(trials: pd.DataFrame) -> pd.DatetimeIndex:
    """Every UTC midnight from the first close to the last."""
    return pd.date_range(trials["closes"].min(), trials["closes"].max(), freq="D")


def daily_counts(trials: pd.DataFrame, groups: list[str]) -> dict[tuple[str, str], pd.DataFrame]:
    """Per (part, group): cumulative hits and trials of the trials closed by each tick."""
    ticks = ticks_of(trials)
    out = {}
    for part, label in PARTS.items():
        for group in groups:
            chosen = trials[(trials["reoffended"] == label) & (trials["race"] == group)]
            per_day = chosen.groupby("closes")["high_risk"].agg(["sum", "size"]).reindex(ticks, fill_value=0)
            out[(part, group)] = per_day.cumsum().rename(columns={"sum": "hits", "size": "trials"})
    return out


def iso(moment: pd.Timestamp) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def expected_evaluations(trials: pd.DataFrame, groups: list[str], confidence: float = CONFIDENCE, floor: int = FLOOR) -> list[dict[str, Any]]:
    """What every daily evaluation should say: closed trials, per part the groups' counts and estimates, the gap between
    the groups with at least `floor` trials, and the verdict."""
    ticks = ticks_of(trials)
    counts = daily_counts(trials, groups)
    closed = trials.groupby("closes").size().reindex(ticks, fill_value=0).cumsum()
    evaluations = []
    for i, tick in enumerate(ticks):
        parts = {}
        for part in PARTS:
            cells = {}
            for group in groups:
                hits, n = (int(v) for v in counts[(part, group)].iloc[i][["hits", "trials"]])
                if n > 0:
                    cells[group] = {"estimate": map_estimate(hits, n, confidence), "hits": hits, "trials": n}
            gap = pair = violated = None
            eligible = [group for group in cells if cells[group]["trials"] >= floor]
            if len(eligible) >= 2:
                high = max(eligible, key=lambda g: cells[g]["estimate"])
                low = min(eligible, key=lambda g: cells[g]["estimate"])
                gap = cells[high]["estimate"] - cells[low]["estimate"]
                pair, violated = [high, low], gap > THRESHOLD
            parts[part] = {"groups": cells, "gap": gap, "pair": pair, "violated": violated}
        evaluations.append({"event_time": iso(tick), "closed": int(closed.iloc[i]), "parts": parts})
    return evaluations


def expected_alerts(evaluations: list[dict[str, Any]]) -> list[tuple[str, str, str, list[str], float]]:
    """(type, event_time, part, pair, gap) each time a part's verdict turns; an undefined verdict changes nothing."""
    state = {part: False for part in PARTS}
    alerts = []
    for evaluation in evaluations:
        for part in sorted(PARTS):
            body = evaluation["parts"][part]
            if body["violated"] is None or body["violated"] == state[part]:
                continue
            state[part] = body["violated"]
            kind = "fairness.violation" if body["violated"] else "fairness.recovered"
            alerts.append((kind, evaluation["event_time"], part, body["pair"], body["gap"]))
    return alerts


def first_violation_day(evaluations: list[dict[str, Any]], part: str) -> str | None:
    return next(
        (e["event_time"] for e in evaluations if e["parts"][part]["gap"] is not None and abs(e["parts"][part]["gap"]) > THRESHOLD), None
    )


def write_variant(spec: Path, out: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of a bundled spec with `change` applied to its dict."""
    body = yaml.safe_load(spec.read_text())
    change(body)
    out.write_text(yaml.safe_dump(body, sort_keys=False))
    return out


def restrict_to_pair(body: dict[str, Any]) -> None:
    body["metric"]["groups"] = list(PAIR)


def without_emitted_at(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in record.items() if k != "emitted_at"} for record in records]


# ---------------------------------------------------------------------------------------------
# The monitor's runs, once per module.
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=sorted(CUTS))
def spec_name(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def reference(spec_name: str, compas_csv: Path) -> pd.DataFrame:
    return compas_trials(compas_csv, CUTS[spec_name])


@pytest.fixture(scope="module")
def all_groups_run(spec_name: str, specs_dir: Path, compas_csv: Path, tmp_path_factory):
    return run_file(specs_dir / spec_name, compas_csv, tmp_path_factory.mktemp("all"))


@pytest.fixture(scope="module")
def pair_run(spec_name: str, specs_dir: Path, compas_csv: Path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pair")
    spec = write_variant(specs_dir / spec_name, folder / "pair.yaml", restrict_to_pair)
    return run_file(spec, compas_csv, folder / "out")


# ---------------------------------------------------------------------------------------------


def test_final_counts_and_estimates_equal_the_batch_computation(all_groups_run, reference):
    last = all_groups_run.read("estimates.jsonl")[-1]
    expected = final_counts(reference)

    assert last["event_time"] == iso(reference["closes"].max())
    assert last["trials"] == {"closed": len(reference), "incomplete": 0}
    assert last["prior"] == PRIOR and last["confidence"] == CONFIDENCE
    for part, groups in expected.items():
        body = last["parts"][part]
        assert {g: shown(c) for g, c in body["groups"].items()} == {g: published(h, n) for g, (h, n) in groups.items()}
        for group, (hits, n) in groups.items():
            want = map_estimate(hits, n) if n >= MIN_CELL else None
            assert body["groups"][group]["estimate"] == pytest.approx(want, abs=1e-12)
        # the verdict, gap and pair come from the real counts of every group above the evidence floor, suppressed cells included
        estimates = {g: map_estimate(h, n) for g, (h, n) in groups.items() if n >= FLOOR}
        high, low = max(estimates, key=estimates.get), min(estimates, key=estimates.get)
        assert body["pair"] == [high, low]
        assert body["gap"] == pytest.approx(estimates[high] - estimates[low], abs=1e-12)
        assert body["violated"] == (estimates[high] - estimates[low] > THRESHOLD)


def test_every_daily_evaluation_of_two_groups_equals_the_batch_computation(pair_run, reference):
    expected = expected_evaluations(reference, PAIR)
    got = pair_run.read("estimates.jsonl")

    assert [r["event_time"] for r in got] == [e["event_time"] for e in expected]
    for record, want in zip(got, expected, strict=True):
        assert record["type"] == "fairness.estimate"
        assert record["trials"] == {"closed": want["closed"], "incomplete": 0}, record["event_time"]
        for part, body in want["parts"].items():
            seen = record["parts"].get(part, {"groups": {}, "gap": None, "pair": None, "violated": None})
            where = (record["event_time"], part)
            assert {g: shown(c) for g, c in seen["groups"].items()} == {
                g: published(c["hits"], c["trials"]) for g, c in body["groups"].items()
            }, where
            for group, cell in body["groups"].items():
                want = cell["estimate"] if cell["trials"] >= MIN_CELL else None
                assert seen["groups"][group]["estimate"] == pytest.approx(want, abs=1e-12), where
            assert seen["violated"] == body["violated"], where
            if body["gap"] is None:
                assert seen["gap"] is None and seen["pair"] is None, where
            else:
                assert seen["gap"] == pytest.approx(body["gap"], abs=1e-12), where
                assert seen["pair"] == body["pair"], where


def test_alerts_fire_when_the_batch_verdict_turns_and_first_violations_match(pair_run, reference):
    evaluations = expected_evaluations(reference, PAIR)
    expected = expected_alerts(evaluations)
    alerts = pair_run.read("alerts.jsonl")

    assert [(a["type"], a["event_time"], a["part"], a["pair"]) for a in alerts] == [e[:4] for e in expected]
    for alert, want in zip(alerts, expected, strict=True):
        assert alert["gap"] == pytest.approx(want[4], abs=1e-12)
        assert alert["threshold"] == THRESHOLD

    for part in PARTS:
        first = first_violation_day(evaluations, part)
        assert first is not None, f"the batch computation finds no violation of {part}"
        turned = [a["event_time"] for a in alerts if a["type"] == "fairness.violation" and a["part"] == part]
        assert turned and turned[0] == first


def test_the_two_cuts_disagree_somewhere(compas_csv):
    """Guards the parametrisation: the two specs must not describe the same classifier on this data."""
    strict = compas_trials(compas_csv, CUTS["compas_equalized_odds.yaml"])
    loose = compas_trials(compas_csv, CUTS["compas_equalized_odds_propublica.yaml"])
    assert (strict["high_risk"] != loose["high_risk"]).any()
