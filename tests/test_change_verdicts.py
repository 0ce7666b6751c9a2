"""Change verdicts through the whole run: a gap that moves raises one `fairness.changed` record dated near the move, a
stream that holds still raises none, a second move is found after the first, the records are the same with two
workers, and the plot, the dashboard and a webhook show the change."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.compiler.load import check_spec
from fairstream.dashboard.state import alert_row
from fairstream.lab.changes.streams import decisions
from fairstream.records.errors import SpecError
from fairstream.report.plot import alerts_by_part

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
START = datetime(2026, 1, 1, tzinfo=UTC)
SPEC = """\
monitor: hiring-change
input: {time: time, key: id, kind: event, kinds: {DECISION: {gender: str, hired: bool}}}
trial: {close_on: [DECISION]}
variables:
  group: {first: DECISION, field: gender}
  hired: {first: DECISION, field: hired}
metric: {type: demographic_parity, group: group, prediction: hired, groups: [a, b], threshold: 0.1}
estimator: {verdict: change, arl: 1000000}
evaluate: {every: 1h}
"""


def write(path: Path, seed: int, n: int = 10_000, change_at: int | None = None, gaps: list[tuple[int, float]] | None = None) -> Path:
    """A decision a minute from START, groups a and b 1:1: the gap 0, or 0.15 from `change_at` (or `gaps` pasted)."""
    if gaps is None:
        in_a, hired = decisions(seed, n, change_at)
    else:
        pieces = [decisions(seed + index, length, 0 if gap else None, gap) for index, (length, gap) in enumerate(gaps)]
        in_a, hired = (sum((list(piece[i]) for piece in pieces), []) for i in (0, 1))
    with path.open("w") as out:
        for index, (a, approved) in enumerate(zip(in_a, hired)):
            time = (START + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.write(json.dumps({"time": time, "id": f"D{index}", "event": "DECISION", "gender": "a" if a else "b", "hired": bool(approved)}) + "\n")
    return path


def run(tmp_path: Path, data: Path, *options: str, name: str = "out") -> list[dict]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    out = tmp_path / name
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(data), "--out", str(out), *options], env=ENV)
    assert result.exit_code == 0, result.output
    path = out / "alerts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def minutes(instant: str) -> float:
    return (datetime.fromisoformat(instant) - START).total_seconds() / 60


def test_a_gap_that_moves_is_found_once_and_dated_near_the_move(tmp_path):
    near = 0
    for seed in (1, 2, 3):
        changes = [alert for alert in run(tmp_path, write(tmp_path / f"s{seed}.jsonl", seed, change_at=5000), name=f"o{seed}") if alert["type"] == "fairness.changed"]
        assert len(changes) == 1, changes
        (change,) = changes
        assert change["pair"] == ["a", "b"] and change["direction"] == "up"
        assert 5000 <= minutes(change["found_at"]) <= 7000  # found within 2,000 decisions
        near += abs(minutes(change["changed_at"]) - 5000) <= 750
        assert change["gap_before_interval"][0] <= 0 <= change["gap_before_interval"][1]
        assert change["gap_after"] > 0.05
    assert near >= 2


def test_a_stream_that_holds_still_raises_no_change(tmp_path):
    assert [alert for alert in run(tmp_path, write(tmp_path / "still.jsonl", 21)) if alert["type"] == "fairness.changed"] == []


def test_the_detector_starts_again_and_finds_the_move_back(tmp_path):
    data = write(tmp_path / "twice.jsonl", 8, gaps=[(6000, 0.0), (6000, 0.2), (6000, 0.0)])
    changes = [alert for alert in run(tmp_path, data) if alert["type"] == "fairness.changed"]
    assert [change["direction"] for change in changes] == ["up", "down"]
    assert abs(minutes(changes[0]["changed_at"]) - 6000) < 1000 and abs(minutes(changes[1]["changed_at"]) - 12000) < 1000


def test_two_workers_write_the_same_changes(tmp_path):
    data = write(tmp_path / "s.jsonl", 5, change_at=5000)

    def changes(*options: str, name: str) -> list[dict]:
        return [{k: v for k, v in alert.items() if k not in ("emitted_at", "chain")} for alert in run(tmp_path, data, *options, name=name)]

    assert changes(name="one") == changes("--workers", "2", name="two") != []


def test_the_plot_and_the_dashboard_show_the_change_point(tmp_path):
    alerts = run(tmp_path, write(tmp_path / "s.jsonl", 1, change_at=5000))
    (change,) = [alert for alert in alerts if alert["type"] == "fairness.changed"]
    assert change in alerts_by_part(alerts)["selection_rate"]
    row = alert_row(change)
    assert row["event_time"] == change["changed_at"] and row["verdict"] == "change" and row["value"] == change["gap_after"]
    result = CliRunner().invoke(cli, ["plot", str(tmp_path / "out"), "-o", str(tmp_path / "plot.png")], env=ENV)
    assert result.exit_code == 0 and (tmp_path / "plot.png").stat().st_size > 10_000


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"window": {"kind": "sliding", "length": "7d"}, "evaluate": {"every": "1d"}}, "use a cumulative window"),
        ({"metric": {"type": "benefit_rate", "group": "group", "supply": "hired", "demand": "hired", "threshold": 0.1}}, "not benefit or scoring rates"),
        ({"estimator": {"verdict": "change", "arl": 10}}, "greater than or equal to 100"),
    ],
)
def test_a_change_spec_that_cannot_hold_is_refused(change, reason):
    import yaml

    spec = {**yaml.safe_load(SPEC), **change}
    with pytest.raises(SpecError, match=reason):
        check_spec(spec)


def test_spec_check_states_the_guarantee(tmp_path):
    (tmp_path / "spec.yaml").write_text(SPEC)
    result = CliRunner().invoke(cli, ["spec", "check", str(tmp_path / "spec.yaml")], env=ENV)
    assert result.exit_code == 0
    assert "change verdicts: on a stream that never changes, at most one false change alarm per 1,000,000 trials of patience" in " ".join(result.output.split())


def test_a_mean_outcome_that_moves_is_found_too(tmp_path):
    """Delayed impact: each decision's outcome a number; group a's mean rises by 0.3 (shift 0.2) at decision 4,000."""
    import numpy as np

    rng = np.random.default_rng(9)
    spec = tmp_path / "means.yaml"
    spec.write_text(
        "monitor: credit-change\n"
        "input: {time: time, key: id, kind: event, kinds: {DECISION: {gender: str, score: float}}}\n"
        "trial: {close_on: [DECISION]}\n"
        "variables: {group: {first: DECISION, field: gender}, score: {first: DECISION, field: score}}\n"
        "metric: {type: delayed_impact, group: group, outcome: score, threshold: 0.5}\n"
        "estimator: {verdict: change, shift: 0.2}\n"
        "evaluate: {every: 1h}\n"
    )
    with (tmp_path / "means.jsonl").open("w") as out:
        for index in range(8000):
            a = bool(rng.random() < 0.5)
            score = rng.normal(0.3 if a and index >= 4000 else 0.0, 1.0)
            time = (START + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.write(json.dumps({"time": time, "id": f"D{index}", "event": "DECISION", "gender": "a" if a else "b", "score": score}) + "\n")
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(tmp_path / "means.jsonl"), "--out", str(tmp_path / "out")], env=ENV)
    assert result.exit_code == 0, result.output
    changes = [json.loads(line) for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines() if '"fairness.changed"' in line]
    assert [change["direction"] for change in changes] == ["up"]
    assert abs(minutes(changes[0]["changed_at"]) - 4000) <= 750 and abs(changes[0]["gap_after"] - 0.3) < 0.15


def test_each_change_is_counted_in_the_alerts_metric(tmp_path):
    from fairstream import metrics

    before = metrics.ALERTS.labels("hiring-change", "fairness.changed")._value.get()
    alerts = run(tmp_path, write(tmp_path / "s.jsonl", 2, change_at=5000))
    found = sum(alert["type"] == "fairness.changed" for alert in alerts)
    assert found == 1 and metrics.ALERTS.labels("hiring-change", "fairness.changed")._value.get() == before + found
