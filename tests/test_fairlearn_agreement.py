"""With κ = 0 the monitor's per-group rates are fairlearn's `MetricFrame.by_group`, and its largest gap is `equalized_odds_difference`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from fairlearn.metrics import MetricFrame, equalized_odds_difference, false_positive_rate, true_positive_rate

from fairstream.runner import run_file
from tests.test_compas_reference import CUTS, compas_trials, iso, write_variant

SPEC = "compas_equalized_odds.yaml"
MIDWAY = pd.Timestamp("2015-09-01")
"""An evaluation tick while about half of the trials have closed."""


def plain_ratio(body: dict) -> None:
    """κ = 0, and every cell published and judged however small, as `MetricFrame` shows and compares every group."""
    body["estimator"]["confidence"] = 0
    body["estimator"]["min_trials"] = 1
    body["publish"] = {"min_cell": 1}


@pytest.fixture(scope="module")
def run(specs_dir: Path, compas_csv: Path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fairlearn")
    spec = write_variant(specs_dir / SPEC, folder / "plain.yaml", plain_ratio)
    return run_file(spec, compas_csv, folder / "out")


@pytest.fixture(scope="module")
def trials(compas_csv: Path) -> pd.DataFrame:
    return compas_trials(compas_csv, CUTS[SPEC])


def frame(closed: pd.DataFrame) -> MetricFrame:
    return MetricFrame(
        metrics={"tpr": true_positive_rate, "fpr": false_positive_rate},
        y_true=closed["reoffended"],
        y_pred=closed["high_risk"],
        sensitive_features=closed["race"],
    )


def record_at(run, event_time: str) -> dict:
    records = [r for r in run.read("estimates.jsonl") if r["event_time"] == event_time]
    assert len(records) == 1, f"expected one evaluation at {event_time}"
    return records[0]


@pytest.mark.parametrize("moment", ["end", "midway"])
def test_rates_by_group_equal_metric_frame(run, trials, moment):
    tick = trials["closes"].max() if moment == "end" else MIDWAY
    closed = trials[trials["closes"] <= tick]
    assert 0 < len(closed) <= len(trials)
    record = record_at(run, iso(tick))
    by_group = frame(closed).by_group

    assert record["confidence"] == 0
    assert record["trials"]["closed"] == len(closed)
    for part, column, label in (("true_positive_rate", "tpr", True), ("false_positive_rate", "fpr", False)):
        groups = record["parts"][part]["groups"]
        # a group takes part once it has a trial in the part's conditioning set; fairlearn lists every group
        conditioned = sorted(closed.loc[closed["reoffended"] == label, "race"].unique())
        assert sorted(groups) == conditioned
        for race in conditioned:
            assert groups[race]["estimate"] == pytest.approx(by_group.loc[race, column], abs=1e-12), (part, race)


def test_largest_gap_is_equalized_odds_difference(run, trials):
    last = run.read("estimates.jsonl")[-1]
    expected = equalized_odds_difference(trials["reoffended"], trials["high_risk"], sensitive_features=trials["race"])

    assert last["event_time"] == iso(trials["closes"].max())
    assert max(body["gap"] for body in last["parts"].values()) == pytest.approx(expected, abs=1e-12)
