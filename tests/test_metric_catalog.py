"""The metric catalog against independent batch computations: predictive parity, disparate impact, intersectional
groups, sliding and periodic windows (COMPAS with fairlearn and pandas), delayed impact and benefit rates (numpy, scipy)."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml
from fairlearn.metrics import MetricFrame, demographic_parity_ratio, selection_rate
from scipy import stats
from sklearn.metrics import precision_score

from fairstream.runner import run_file
from tests.conftest import SPECS
from tests.helpers import reference_file
from tests.test_compas_reference import compas_trials, iso, write_variant

COMPAS_SPEC = SPECS / "compas_equalized_odds.yaml"


@pytest.fixture(scope="module")
def trials(compas_csv):
    frame = compas_trials(compas_csv, lambda score: score > 6)
    sex = pd.read_csv(compas_csv, usecols=["sex"])["sex"]
    return frame.assign(sex=sex.values)


def run_variant(tmp_path, change):
    """The COMPAS spec changed, publishing and judging every cell however small, as the batch references show and compare every group."""

    def publishing_every_cell(body):
        change(body)
        body["publish"] = {"min_cell": 1}
        body["estimator"].setdefault("min_trials", 1)

    spec = write_variant(COMPAS_SPEC, tmp_path / "spec.yaml", publishing_every_cell)
    result = run_file(spec, reference_file("compas"), tmp_path / "out")
    return result.read("estimates.jsonl"), result.read("alerts.jsonl")


def final_estimates(records, part):
    return {group: cell["estimate"] for group, cell in records[-1]["parts"][part]["groups"].items()}


def plain(body, metric_type, **metric):
    body["metric"] = {"type": metric_type, "group": "group", "prediction": "high_risk", "threshold": 0.1, **metric}
    body["estimator"] = {"prior": 0.5, "confidence": 0}


def test_predictive_parity_equals_precision_by_group(tmp_path, trials):
    estimates, _ = run_variant(tmp_path, lambda b: plain(b, "predictive_parity", label="reoffended"))
    frame = MetricFrame(metrics=precision_score, y_true=trials.reoffended, y_pred=trials.high_risk, sensitive_features=trials.race)
    expected = {group: value for group, value in frame.by_group.items() if trials[(trials.race == group) & trials.high_risk].shape[0]}
    assert final_estimates(estimates, "positive_predictive_value") == pytest.approx(expected, abs=1e-12)


def test_disparate_impact_is_fairlearns_demographic_parity_ratio(tmp_path, trials):
    estimates, alerts = run_variant(tmp_path, lambda b: plain(b, "disparate_impact", threshold=0.8))
    part = estimates[-1]["parts"]["selection_rate"]
    expected = demographic_parity_ratio(trials.reoffended, trials.high_risk, sensitive_features=trials.race)
    assert part["ratio"] == pytest.approx(expected, abs=1e-12)
    assert part["violated"] == (expected < 0.8)
    assert [a["type"] for a in alerts][:1] == ["fairness.violation"]


def test_intersectional_groups_equal_metricframe_over_two_features(tmp_path, trials):
    def change(body):
        body["input"]["kinds"]["SCREEN"]["sex"] = "str"
        body["variables"]["sex"] = {"first": "SCREEN", "field": "sex"}
        plain(body, "demographic_parity", group=["group", "sex"])

    estimates, _ = run_variant(tmp_path, change)
    frame = MetricFrame(metrics=selection_rate, y_true=trials.reoffended, y_pred=trials.high_risk, sensitive_features=trials[["race", "sex"]])
    expected = {f"{race} & {sex}": value for (race, sex), value in frame.by_group.items() if not np.isnan(value)}
    assert final_estimates(estimates, "selection_rate") == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("kind", ["sliding", "periodic"])
def test_windows_count_only_the_trials_they_cover(tmp_path, trials, kind):
    def change(body):
        plain(body, "demographic_parity")
        body["window"] = {"kind": kind, "length": "90d"}

    estimates, _ = run_variant(tmp_path, change)
    length = pd.Timedelta(days=90)
    epoch = pd.Timestamp("1970-01-01")
    for record in estimates[::37]:
        tick = pd.Timestamp(record["event_time"]).tz_localize(None)
        if kind == "sliding":
            covered = trials[(trials.closes > tick - length) & (trials.closes <= tick)]
        else:
            start = tick - ((tick - epoch) % length) if (tick - epoch) % length else tick - length
            covered = trials[(trials.closes > start) & (trials.closes <= tick)]
        counts = covered.groupby("race").high_risk.agg(["sum", "count"])
        expected = {race: [int(row["sum"]), int(row["count"])] for race, row in counts.iterrows() if row["count"]}
        got = {g: [c["hits"], c["trials"]] for g, c in record["parts"].get("selection_rate", {"groups": {}})["groups"].items()}
        assert got == expected, record["event_time"]


def measure_stream(tmp_path, rng):
    """Loans: each applicant's later repayment share (delayed impact) and granted/asked amounts (benefit)."""
    rows = []
    for index in range(600):
        group = "a" if index % 3 else "b"
        rows.append(
            {
                "event": "LOAN", "id": str(index), "time": iso(pd.Timestamp("2024-01-01") + pd.Timedelta(hours=index)),
                "group": group, "repaid": float(rng.beta(5, 2) if group == "a" else rng.beta(2, 2)),
                "granted": float(rng.integers(0, 10)), "asked": float(rng.integers(5, 10)),
            }
        )  # fmt: skip
    path = tmp_path / "loans.jsonl"
    path.write_bytes(b"".join(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE) for row in rows))
    return path, pd.DataFrame(rows)


def measure_spec(tmp_path, metric, estimator):
    spec = {
        "monitor": "loans",
        "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"LOAN": {"group": "str", "repaid": "float", "granted": "float", "asked": "float"}}},
        "trial": {"close_on": ["LOAN"]},
        "variables": {name: {"first": "LOAN", "field": name} for name in ("group", "repaid", "granted", "asked")},
        "metric": {"group": "group", "threshold": 0.1, **metric},
        "estimator": estimator,
        "evaluate": {"every": "1d"},
    }
    path = tmp_path / "loans.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_delayed_impact_means_and_t_bounds(tmp_path):
    data, frame = measure_stream(tmp_path, np.random.default_rng(4))
    spec = measure_spec(tmp_path, {"type": "delayed_impact", "outcome": "repaid"}, {"verdict": "confident", "alpha": 0.05})
    record = run_file(spec, data, tmp_path / "out").read("estimates.jsonl")[-1]["parts"]["mean_outcome"]
    for group, values in frame.groupby("group").repaid:
        cell = record["groups"][group]
        low, high = stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=values.std(ddof=1) / np.sqrt(len(values)))
        assert cell["estimate"] == pytest.approx(values.mean(), abs=1e-12)
        assert cell["interval"] == pytest.approx([low, high], abs=1e-9)
    means = frame.groupby("group").repaid.mean()
    assert record["gap"] == pytest.approx(means["a"] - means["b"], abs=1e-12) and record["violated"]


@pytest.mark.parametrize("weighting", ["discount", "recency"])
def test_benefit_rate_is_supply_over_demand_weighted_by_tick(tmp_path, weighting):
    """discount: ELBERT's γ^t, t ticks after the first; recency: γ^(T − t), T the last tick."""
    data, frame = measure_stream(tmp_path, np.random.default_rng(5))
    spec = measure_spec(tmp_path, {"type": "benefit_rate", "supply": "granted", "demand": "asked", weighting: 0.9}, {})
    record = run_file(spec, data, tmp_path / "out").read("estimates.jsonl")[-1]["parts"]["benefit_rate"]
    days = pd.to_datetime(frame.time).dt.tz_localize(None).dt.ceil("D")
    steps = (days - days.min()).dt.days if weighting == "discount" else (days.max() - days).dt.days
    weight = 0.9**steps
    for group in ("a", "b"):
        rows = frame.group == group
        expected = (frame.granted[rows] * weight[rows]).sum() / (frame.asked[rows] * weight[rows]).sum()
        assert record["groups"][group]["estimate"] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("weighting", "expected"), [("discount", 50 / 51), ("recency", 100 / 100.5)])
def test_benefit_rate_on_elberts_figure_1(tmp_path, weighting, expected):
    """ELBERT's Fig. 1, blue group, γ = 0.5: one applicant rejected on the first day, a hundred accepted on the next.
    The paper's long-term benefit rate is 50/51 = 0.980; a recency average would say 0.995."""
    rows = [{"event": "LOAN", "id": "first", "time": "2024-01-01T12:00:00Z", "group": "blue", "repaid": 0.0, "granted": 0.0, "asked": 1.0}]
    rows += [
        {"event": "LOAN", "id": f"next-{n}", "time": "2024-01-02T12:00:00Z", "group": "blue", "repaid": 0.0, "granted": 1.0, "asked": 1.0}
        for n in range(100)
    ]
    data = tmp_path / "figure1.jsonl"
    data.write_bytes(b"".join(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE) for row in rows))
    spec = measure_spec(tmp_path, {"type": "benefit_rate", "supply": "granted", "demand": "asked", weighting: 0.5}, {})
    record = run_file(spec, data, tmp_path / "out").read("estimates.jsonl")[-1]["parts"]["benefit_rate"]
    assert record["groups"]["blue"]["estimate"] == pytest.approx(expected, rel=1e-12)


def test_conditional_statistical_parity_per_stratum_and_standardized(tmp_path, trials):
    age = pd.read_csv(reference_file("compas"), usecols=["age_cat"])["age_cat"]
    frame = trials.assign(age=age.values)

    def change(body):
        body["variables"]["age"] = {"first": "SCREEN", "field": "age_cat"}
        plain(body, "conditional_statistical_parity", condition="age")

    estimates, _ = run_variant(tmp_path, change)
    parts = estimates[-1]["parts"]
    rates = frame.groupby(["age", "race"]).high_risk.mean()
    for (stratum, race), rate in rates.items():
        assert parts[f"selection_rate[age={stratum}]"]["groups"][race]["estimate"] == pytest.approx(rate, abs=1e-12)
    share = frame.age.value_counts() / len(frame)
    for race, by_stratum in rates.groupby(level="race"):
        strata = by_stratum.index.get_level_values("age")
        expected = sum(share[s] * by_stratum[(s, race)] for s in strata) / share[strata].sum()
        assert parts["selection_rate[standardized]"]["groups"][race]["estimate"] == pytest.approx(expected, abs=1e-12)
