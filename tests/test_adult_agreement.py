"""Over the UCI Adult data with κ = 0, the monitor's final per-group rates and gaps are fairlearn's.

Each row of `adult.data` becomes one DECISION, a minute after the previous one: the rule below predicts a
high income, the label says whether the income exceeds 50K. Demographic parity is monitored across sex and
equalized odds across race, evaluated daily; after the last decision the rates must equal
`MetricFrame.by_group` and the gaps `demographic_parity_difference` and `equalized_odds_difference`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    equalized_odds_difference,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)

from fairstream.runner import FileRun, run_file
from tests.helpers import reference_file

COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
]  # fmt: skip
START = pd.Timestamp("2024-01-01", tz="UTC")
FIELDS = {"sex": "str", "race": "str", "predicted": "bool", "high_income": "bool"}


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    """The rows of `adult.data` with the predicted and the true high income."""
    path = reference_file("adult")
    frame = pd.read_csv(path, header=None, names=COLUMNS, skipinitialspace=True)
    return frame.assign(
        predicted=(frame["education-num"] >= 13) | (frame["capital-gain"] > 5000),
        high_income=frame["income"] == ">50K",
    )


@pytest.fixture(scope="module")
def events(adult: pd.DataFrame, tmp_path_factory) -> Path:
    """One DECISION per row as JSON lines: id = row number, one minute apart from `START`."""
    path = tmp_path_factory.mktemp("adult") / "decisions.jsonl"
    times = pd.date_range(START, periods=len(adult), freq="min").strftime("%Y-%m-%dT%H:%M:%SZ")
    stream = adult[list(FIELDS)].assign(event="DECISION", id=[str(row) for row in range(len(adult))], time=times)
    stream.to_json(path, orient="records", lines=True)
    return path


def monitor(events: Path, folder: Path, metric: dict[str, Any]) -> dict[str, Any]:
    """Run a κ = 0 spec with this metric over the events; return its last evaluation."""
    spec = {
        "monitor": f"adult-{metric['type']}",
        "input": {"time": "time", "time_format": "iso", "key": "id", "kind": "event", "kinds": {"DECISION": FIELDS}},
        "trial": {"close_on": ["DECISION"]},
        "variables": {name: {"first": "DECISION", "field": name} for name in FIELDS},
        "metric": {**metric, "threshold": 0.1},
        "estimator": {"confidence": 0},
        "evaluate": {"every": "1d"},
    }
    folder.mkdir()
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec))
    run: FileRun = run_file(folder / "spec.yaml", events, folder / "out")
    return run.read("estimates.jsonl")[-1]


def test_demographic_parity_across_sex_agrees_with_fairlearn(adult, events, tmp_path):
    last = monitor(events, tmp_path / "sex", {"type": "demographic_parity", "group": "sex", "prediction": "predicted"})
    body = last["parts"]["selection_rate"]
    frame = MetricFrame(metrics=selection_rate, y_true=adult["high_income"], y_pred=adult["predicted"], sensitive_features=adult["sex"])

    assert last["trials"]["closed"] == len(adult)
    assert sorted(body["groups"]) == sorted(frame.by_group.index)
    for sex, rate in frame.by_group.items():
        assert body["groups"][sex]["estimate"] == pytest.approx(rate, abs=1e-12), sex
    expected = demographic_parity_difference(adult["high_income"], adult["predicted"], sensitive_features=adult["sex"])
    assert body["gap"] == pytest.approx(expected, abs=1e-12)


def test_equalized_odds_across_race_agrees_with_fairlearn(adult, events, tmp_path):
    metric = {"type": "equalized_odds", "group": "race", "prediction": "predicted", "label": "high_income"}
    last = monitor(events, tmp_path / "race", metric)
    frame = MetricFrame(
        metrics={"true_positive_rate": true_positive_rate, "false_positive_rate": false_positive_rate},
        y_true=adult["high_income"],
        y_pred=adult["predicted"],
        sensitive_features=adult["race"],
    )

    assert last["trials"]["closed"] == len(adult)
    for part in ("true_positive_rate", "false_positive_rate"):
        groups = last["parts"][part]["groups"]
        assert sorted(groups) == sorted(frame.by_group.index)
        for race, rate in frame.by_group[part].items():
            assert groups[race]["estimate"] == pytest.approx(rate, abs=1e-12), (part, race)
    expected = equalized_odds_difference(adult["high_income"], adult["predicted"], sensitive_features=adult["race"])
    assert max(body["gap"] for body in last["parts"].values()) == pytest.approx(expected, abs=1e-12)
