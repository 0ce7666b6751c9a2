"""A plain table needs no invented dates or ids: a spec with only `monitor` and `metric` whose names are columns reads
each row of the real Adult file as one closed trial, in row order, from a DataFrame and from a CSV file, and its final
rates, gaps and ratios equal fairlearn's MetricFrame."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from fairlearn.metrics import MetricFrame, false_positive_rate, selection_rate, true_positive_rate

from fairstream import monitor_frame
from fairstream.cli import cli
from fairstream.compiler.load import load_plans
from tests.helpers import reference_file

COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation", "relationship", "race", "sex",
           "capital_gain", "capital_loss", "hours_per_week", "native_country", "income"]  # fmt: skip
EQUALIZED_ODDS = {
    "monitor": "adult-odds",
    "metric": {"type": "equalized_odds", "group": "race", "prediction": "graduate", "label": "rich", "groups": "all", "threshold": 0.1},
    "estimator": {"min_trials": 1},
    "publish": {"min_cell": 1},
}
PARITY = {"monitor": "adult-parity", "metric": {"type": "demographic_parity", "group": "sex", "prediction": "rich", "groups": "all", "threshold": 0.1}}


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    """Adult's rows with a prediction (a degree: 13 years of education or more) and a label (income over 50K)."""
    path = reference_file("adult")
    raw = pd.read_csv(path, header=None, names=COLUMNS, skipinitialspace=True)
    return pd.DataFrame({"race": raw.race, "sex": raw.sex, "graduate": raw.education_num >= 13, "rich": raw.income == ">50K"})


def last_rows(estimates: pd.DataFrame) -> pd.DataFrame:
    return estimates[estimates.time == estimates.time.max()]


def test_a_table_spec_is_a_full_spec_of_one_kind():
    [plan] = load_plans([PARITY])
    assert plan.spec.input.numbered and list(plan.spec.input.kinds) == ["ROW"] and plan.spec.evaluate.on == "close"
    assert {name: variable.field for name, variable in plan.spec.variables.items()} == {"sex": "sex", "rich": "rich"}


def test_a_frame_monitored_by_a_table_spec_equals_fairlearns_metric_frame(adult):
    result = monitor_frame(adult, EQUALIZED_ODDS)
    final = last_rows(result.estimates)
    assert final.trials.sum() == len(adult)  # every row is a trial, in a true- or a false-positive part
    for part, metric, positives in (("true_positive_rate", true_positive_rate, True), ("false_positive_rate", false_positive_rate, False)):
        frame = MetricFrame(metrics=metric, y_true=adult.rich, y_pred=adult.graduate, sensitive_features=adult.race)
        rows = final[final.part == part].set_index("group")
        assert rows.rate.to_dict() == pytest.approx(frame.by_group.to_dict(), abs=1e-12)
        assert rows.trials.to_dict() == adult[adult.rich == positives].race.value_counts().to_dict()
        assert list(rows.raw_gap) == pytest.approx([frame.difference()] * len(rows), abs=1e-12)
        assert list(rows.raw_ratio) == pytest.approx([frame.ratio()] * len(rows), abs=1e-12)
    assert result.dead_letters.empty


def test_a_csv_table_runs_from_the_command_line_as_the_frame_does(adult, tmp_path: Path):
    adult.to_csv(tmp_path / "adult.csv", index=False)
    (tmp_path / "parity.yaml").write_text(json.dumps(PARITY))
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "parity.yaml"), "--input", str(tmp_path / "adult.csv"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    last = json.loads((tmp_path / "out" / "estimates.jsonl").read_text().splitlines()[-1])["parts"]["selection_rate"]
    frame = MetricFrame(metrics=selection_rate, y_true=adult.rich, y_pred=adult.rich, sensitive_features=adult.sex)
    assert {group: cell["rate"] for group, cell in last["groups"].items()} == pytest.approx(frame.by_group.to_dict(), abs=1e-12)
    assert last["raw_gap"] == pytest.approx(frame.difference(), abs=1e-12)
    final = last_rows(monitor_frame(adult, PARITY).estimates).set_index("group")
    assert final.hits.to_dict() == {group: cell["hits"] for group, cell in last["groups"].items()}


def test_a_table_counts_rows_in_whole_numbers_and_marks_the_groups_below_the_floor(adult):
    head = adult.head(500)
    estimates = monitor_frame(head, PARITY).estimates
    assert str(estimates.hits.dtype) == str(estimates.trials.dtype) == str(estimates.row.dtype) == "Int64"
    seen = estimates.dropna(subset=["trials"])
    counted = {  # each group's rows among the first n, by pandas
        (row, group): int((head.sex.iloc[:row] == group).sum()) for row, group in zip(seen.row, seen.group, strict=True)
    }
    assert list(seen.trials) == [counted[key] for key in zip(seen.row, seen.group, strict=True)]
    assert list(seen.below_floor) == [trials < 100 for trials in seen.trials]  # ⌈1/0.1²⌉
    assert set(estimates.row) == set(range(1, len(head) + 1))


def test_a_table_too_short_for_the_floor_says_why_in_one_line(adult, tmp_path: Path):
    head = adult.head(71)
    head.to_csv(tmp_path / "short.csv", index=False)
    (tmp_path / "parity.yaml").write_text(json.dumps(PARITY))
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "parity.yaml"), "--input", str(tmp_path / "short.csv"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    counts = head.sex.value_counts().sort_index()
    short = ", ".join(f"{group} {count:,}" for group, count in counts.items())
    said = [line for line in result.output.splitlines() if "no verdict" in line]
    assert said == [
        f"warning: selection_rate: no verdict: the evidence floor asks 100 trials of each group (⌈1/ε²⌉ for ε = 0.1, by default; "
        f"estimator.min_trials sets it) and {short} fall short"
    ]
    assert "after row 71" in result.output and "1970" not in result.output
    with pytest.warns(UserWarning, match="adult-parity: selection_rate: no verdict"):
        monitor_frame(head, PARITY)


def test_a_tables_first_violation_and_plot_count_rows(tmp_path: Path):
    from fairstream.report.plot import part_series, read_records

    rows = pd.DataFrame({"sex": ["a", "b"] * 150, "rich": [True, False] * 150})  # a gap of 1 from the first rows on
    rows.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "parity.yaml").write_text(json.dumps(PARITY))
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "parity.yaml"), "--input", str(tmp_path / "t.csv"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    [violation] = [json.loads(line) for line in (tmp_path / "out" / "alerts.jsonl").read_text().splitlines()]
    assert violation["row"] == 200  # the row at which b, every other row, reaches the floor of 100
    assert "│ row 200 " in result.output
    [series] = part_series(read_records(tmp_path / "out" / "estimates.jsonl"))
    assert series.times == list(range(1, 301))


@pytest.mark.parametrize("metric_type", ["equalized_odds", "disparate_impact"])
def test_compare_overall_equals_fairlearns_to_overall(adult, metric_type):
    spec = {
        "monitor": "adult-overall",
        "metric": {"type": metric_type, "group": "race", "prediction": "graduate", "groups": "all", "compare": "overall",
                   "threshold": 0.8 if metric_type == "disparate_impact" else 0.1, **({"label": "rich"} if metric_type == "equalized_odds" else {})},
        "estimator": {"min_trials": 1},
        "publish": {"min_cell": 1},
    }  # fmt: skip
    result = monitor_frame(adult, spec)
    final = last_rows(result.estimates)
    parts = {"equalized_odds": (("true_positive_rate", true_positive_rate), ("false_positive_rate", false_positive_rate)),
             "disparate_impact": (("selection_rate", selection_rate),)}[metric_type]  # fmt: skip
    for part, metric in parts:
        frame = MetricFrame(metrics=metric, y_true=adult.rich, y_pred=adult.graduate, sensitive_features=adult.race)
        rows = final[final.part == part]  # the part's pair: the group of the widest gap, or of the smallest ratio for a ratio metric
        if metric_type == "disparate_impact":
            assert rows.raw_ratio.iloc[0] == pytest.approx(frame.ratio(method="to_overall"), abs=1e-12)
        else:
            assert rows.raw_gap.iloc[0] == pytest.approx(frame.difference(method="to_overall"), abs=1e-12)
    estimate = next(record for record in reversed(monitor_frame_records(adult, spec)) if record["type"] == "fairness.estimate")
    for part, metric in parts:
        overall = MetricFrame(metrics=metric, y_true=adult.rich, y_pred=adult.graduate, sensitive_features=adult.race).overall
        assert estimate["parts"][part]["overall"]["rate"] == pytest.approx(overall, abs=1e-12)
        assert "(overall)" in estimate["parts"][part]["pair"]


def monitor_frame_records(frame: pd.DataFrame, spec: dict) -> list[dict]:
    from fairstream.api import FairnessMonitor
    from fairstream.connectors.files import numbered_rows
    from fairstream.frames import frame_records

    monitor = FairnessMonitor.load(spec)
    rows = list(numbered_rows(lambda: list(frame_records(frame, monitor.time_field, monitor.time_format)))())
    return monitor.feed(rows) + monitor.close()


def test_compare_overall_refuses_what_it_cannot_judge():
    from fairstream.records.errors import SpecError

    for changed, said in (
        ({"pairs": [["Male", "Female"]]}, "give one of them"),
        ({"type": "delayed_impact", "outcome": "rich"}, "compares mean outcomes"),
    ):
        with pytest.raises(SpecError, match=said):
            load_plans([{**PARITY, "metric": {**PARITY["metric"], "compare": "overall", **changed}}])
    with pytest.raises(SpecError, match="compare: overall takes point or confident verdicts"):
        load_plans([{**PARITY, "metric": {**PARITY["metric"], "compare": "overall"}, "estimator": {"verdict": "anytime"}}])


def test_compare_overall_confident_intervals_are_the_share_of_the_others_times_newcombes(adult):
    from scipy.stats import norm

    spec = {
        "monitor": "adult-overall-confident",
        "metric": {"type": "demographic_parity", "group": "race", "prediction": "graduate", "groups": "all", "compare": "overall", "threshold": 0.1},
        "estimator": {"verdict": "confident", "interval": "wilson", "min_trials": 1, "confidence": 0},
        "publish": {"min_cell": 1},
    }
    body = next(r for r in reversed(monitor_frame_records(adult, spec)) if r["type"] == "fairness.estimate")["parts"]["selection_rate"]
    group = next(name for name in body["pair"] if name != "(overall)")
    mine, rest = adult[adult.race == group], adult[adult.race != group]
    z = norm.ppf(1 - body["alpha"] / 2)

    def wilson(hits: int, n: int) -> tuple[float, float]:
        p = hits / n
        centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
        return centre - half, centre + half

    (p1, n1), (p2, n2) = ((frame.graduate.sum(), len(frame)) for frame in (mine, rest))
    (l1, u1), (l2, u2), d = wilson(p1, n1), wilson(p2, n2), p1 / n1 - p2 / n2
    newcombe = (d - ((p1 / n1 - l1) ** 2 + (u2 - p2 / n2) ** 2) ** 0.5, d + ((u1 - p1 / n1) ** 2 + (p2 / n2 - l2) ** 2) ** 0.5)
    share = len(rest) / len(adult)
    expected = (share * newcombe[0], share * newcombe[1]) if body["pair"][0] == group else (-share * newcombe[1], -share * newcombe[0])
    assert body["interval"] == pytest.approx(list(expected), abs=1e-9)
    assert body["raw_gap"] == pytest.approx(abs(mine.graduate.mean() - adult.graduate.mean()), abs=1e-12)


def test_compare_overall_withholds_the_overall_beside_a_suppressed_cell_and_keeps_it_out_of_the_groups():
    rows = pd.DataFrame({"sex": ["a"] * 40 + ["b"] * 3, "rich": [True, False] * 20 + [True] * 3})
    spec = {**PARITY, "metric": {**PARITY["metric"], "compare": "overall"}, "estimator": {"min_trials": 1}, "publish": {"min_cell": 5}}
    body = next(r for r in reversed(monitor_frame_records(rows, spec)) if r["type"] == "fairness.estimate")["parts"]["selection_rate"]
    assert set(body["groups"]) == {"a", "b"} and body["groups"]["b"]["suppressed"]
    assert body["overall"]["suppressed"] and body["overall"]["rate"] is None  # 23/43 less a's 20/40 would give b's 3/3
    assert body["gap_suppressed"] and body["raw_gap"] is None
