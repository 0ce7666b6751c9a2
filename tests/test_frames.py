"""DataFrames in and out: COMPAS read with pandas.read_json (a score column of floats with NaN, dates as Timestamps,
ids as numpy integers) gives the file run's estimates and alerts; a spec may be a dict; a frame whose every row is
rejected raises with the reasons, one with some rejected rows warns; rows out of time order are read in time order, as
the CLI reads a file, unless kept as they are; pandas is named when missing."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pandas as pd
import pytest

from fairstream import FairnessMonitor, monitor_frame
from fairstream.connectors.compas import compas_events
from fairstream.language.yaml_file import find_spec, read_yaml
from fairstream.runner import run_file
from tests.helpers import under_any_spec
from tests.kafka.outputs import without_emitted_at


@pytest.fixture(scope="module")
def compas_frame(compas_csv) -> pd.DataFrame:
    text = "\n".join(json.dumps(event) for event in compas_events(compas_csv))
    return pd.read_json(io.StringIO(text), lines=True)


@pytest.fixture(scope="module")
def file_run(compas_csv, tmp_path_factory):
    return run_file("compas_equalized_odds", compas_csv, tmp_path_factory.mktemp("compas"))


def test_the_frame_is_what_pandas_makes_of_the_events(compas_frame):
    assert compas_frame["decile_score"].dtype == np.float64 and compas_frame["decile_score"].isna().any()
    assert str(compas_frame["date"].dtype).startswith("datetime64") and compas_frame["id"].dtype == np.int64


def test_monitoring_the_compas_frame_gives_the_file_runs_estimates_and_alerts(compas_frame, file_run):
    result = monitor_frame(compas_frame, "compas_equalized_odds")
    assert without_emitted_at(result.alerts.to_dict("records")) == without_emitted_at(file_run.read("alerts.jsonl"))
    expected = [
        (pd.Timestamp(record["event_time"]), part, group, cell["estimate"], cell["trials"], body["status"])
        for record in file_run.read("estimates.jsonl")
        for part, body in record["parts"].items()
        for group, cell in body["groups"].items()
    ]
    got = list(result.estimates[["time", "part", "group", "estimate", "trials", "status"]].itertuples(index=False, name=None))
    assert len(got) == len(expected) > 1000
    for mine, theirs in zip(got, expected, strict=True):
        assert mine[:3] == theirs[:3] and mine[5] == theirs[5]
        assert (pd.isna(mine[3]) and theirs[3] is None) or mine[3] == pytest.approx(theirs[3])
        assert (pd.isna(mine[4]) and theirs[4] is None) or mine[4] == theirs[4]
    assert result.dead_letters.empty


def test_rows_out_of_time_order_are_read_in_time_order_as_a_file_is(compas_frame, file_run):
    shuffled = compas_frame.sample(frac=1, random_state=7)
    result = monitor_frame(shuffled, "compas_equalized_odds")
    assert result.dead_letters.empty
    assert without_emitted_at(result.alerts.to_dict("records")) == without_emitted_at(file_run.read("alerts.jsonl"))
    assert len(result.estimates) == len(monitor_frame(compas_frame, "compas_equalized_odds").estimates)
    kept = monitor_frame(shuffled.head(2000), "compas_equalized_odds", keep_order=True)  # as a stream arrives: late rows
    assert set(kept.dead_letters["reason"]) == {"late"} and len(kept.dead_letters) > 1000


def test_a_spec_may_be_given_as_a_dict(compas_frame, file_run):
    spec = read_yaml(find_spec("compas_equalized_odds"))
    monitor = FairnessMonitor.load(spec)
    assert monitor.time_field == "date"
    result = monitor_frame(compas_frame, spec)  # the chain names the hash of the dict's YAML, not the file's
    assert under_any_spec(result.alerts.to_dict("records")) == under_any_spec(file_run.read("alerts.jsonl"))


def test_a_frame_whose_every_row_is_rejected_raises_with_the_reasons(compas_frame):
    wrong = compas_frame.rename(columns={"event": "kind"}).head(50)
    with pytest.raises(ValueError, match=r"every one of the 50 rows was rejected: missing_field: 50"):
        monitor_frame(wrong, "compas_equalized_odds")


def test_some_rejected_rows_give_a_warning(compas_frame):
    damaged = compas_frame.head(400).copy()
    damaged.loc[damaged.index[:10], "date"] = pd.NaT
    with pytest.warns(UserWarning, match=r"10 of 400 rows were rejected \(missing_field: 10\)"):
        result = monitor_frame(damaged, "compas_equalized_odds")
    assert len(result.dead_letters) == 10


def test_without_pandas_the_extra_to_install_is_named(monkeypatch, compas_frame):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'fairstream\[frames\]'"):
        monitor_frame(compas_frame, "compas_equalized_odds")
