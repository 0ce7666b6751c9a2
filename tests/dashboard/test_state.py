"""The dashboard's pure parts: thinning keeps the ends and spreads evenly, violated periods equal a run-length
computation in pandas, records read twice count once, and an output directory is followed line by line as it grows."""

from __future__ import annotations

import json

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from fairstream.dashboard.sources import DirectorySource
from fairstream.dashboard.state import DashboardState, thin, violated_periods


@given(st.integers(1, 5000), st.integers(2, 400))
def test_thinning_keeps_the_first_and_last_and_leaves_no_wide_gap(count, max_points):
    kept = thin(count, max_points)
    assert kept[0] == 0 and kept[-1] == count - 1 and len(kept) <= max_points
    assert kept == sorted(set(kept))
    if count > max_points:
        assert max(b - a for a, b in zip(kept, kept[1:])) <= -(-(count - 1) // (max_points - 1)) + 1


@given(st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=60))
def test_violated_periods_are_the_runs_of_violated_evaluations(verdicts):
    times = [f"t{index:03d}" for index in range(len(verdicts))]
    frame = pd.DataFrame({"time": times, "violated": [bool(v) for v in verdicts]})
    frame["run"] = (frame.violated != frame.violated.shift()).cumsum()
    expected = []
    for _, run in frame[frame.violated].groupby("run"):
        after = run.index[-1] + 1
        expected.append([run.time.iloc[0], times[after] if after < len(times) else times[-1]])
    assert violated_periods(list(zip(times, verdicts))) == expected


def estimate(day: int, violated: bool) -> dict:
    body = {"groups": {"a": {"estimate": 0.5, "trials": 20}, "b": {"estimate": 0.3, "trials": 20}}, "gap": 0.2, "ratio": 0.6,
            "pair": ["a", "b"], "threshold": 0.1, "violated": violated, "clear": not violated}  # fmt: skip
    return {"alert_id": f"e{day}", "monitor": "m", "type": "fairness.estimate", "event_time": f"2024-01-{day:02d}T00:00:00Z",
            "metric": "demographic_parity", "verdict": "point", "trials": {"closed": day, "incomplete": 0}, "parts": {"selection_rate": body}}  # fmt: skip


def test_records_read_twice_count_once():
    state = DashboardState()
    alert = {"alert_id": "v1", "monitor": "m", "type": "fairness.violation", "event_time": "2024-01-02T00:00:00Z", "part": "selection_rate", "pair": ["a", "b"], "gap": 0.2}
    letter = {"alert_id": "d1", "type": "pipeline.dead_letter", "reason": "late"}
    state.add([estimate(1, False), estimate(2, True), alert, letter])
    state.add([estimate(2, True), alert, letter, estimate(3, True)])  # a re-read from the start of a topic, then one more
    view = state.snapshot(max_points=100)
    monitor = view["monitors"][0]
    assert monitor["evaluations"] == 3 and [a["alert_id"] for a in monitor["alerts"]] == ["v1"] and view["dead_letters"] == {"late": 1}
    assert monitor["parts"][0]["violated_periods"] == [["2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"]]


def test_a_directory_is_followed_line_by_line_and_from_the_start_when_written_anew(tmp_path):
    source = DirectorySource(tmp_path)
    records, error = source.poll()
    assert records == [] and error.endswith("it holds none of estimates.jsonl, alerts.jsonl, dead_letters.jsonl")
    path = tmp_path / "estimates.jsonl"
    first, second = json.dumps(estimate(1, False)), json.dumps(estimate(2, False))
    path.write_text(first + "\n" + second[:30])
    assert [r["alert_id"] for r in source.poll()[0]] == ["e1"]
    with path.open("a") as handle:
        handle.write(second[30:] + "\n")
    assert [r["alert_id"] for r in source.poll()[0]] == ["e2"]
    assert source.poll() == ([], None)
    path.write_text(first + "\n")  # a new run into the same directory
    assert [r["alert_id"] for r in source.poll()[0]] == ["e1"]
    with path.open("a") as handle:
        handle.write("not json\n" + second + "\n")
    bad = f"{path}, line 2, is not JSON (skipped): is it a fairstream output file?"
    assert [r["alert_id"] for r in source.poll()[0]] == ["e2"] and source.poll() == ([], bad)  # said for as long as it runs
