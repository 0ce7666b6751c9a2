"""Weighted trials (`metric.weight`, fairlearn's sample_weight) on the real Adult file with its census weights (fnlwgt):
every group's rate and every part's gap equal fairlearn's MetricFrame with sample_params, between groups and to the
overall rate; the evidence floor and confident intervals count Kish's effective trials (a closed form here); the
counts stay whole; a trial without a usable weight is incomplete; what weights cannot go with is refused."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from fairlearn.metrics import MetricFrame, false_positive_rate, selection_rate, true_positive_rate
from scipy.stats import norm

from fairstream import monitor_frame
from fairstream.compiler.load import load_plans
from fairstream.records.errors import SpecError
from tests.helpers import reference_file

COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation", "relationship", "race", "sex",
           "capital_gain", "capital_loss", "hours_per_week", "native_country", "income"]  # fmt: skip
PARTS = {"true_positive_rate": true_positive_rate, "false_positive_rate": false_positive_rate}


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    raw = pd.read_csv(reference_file("adult"), header=None, names=COLUMNS, skipinitialspace=True)
    return pd.DataFrame({"race": raw.race, "graduate": raw.education_num >= 13, "rich": raw.income == ">50K", "w": raw.fnlwgt})


def spec(**metric) -> dict:
    return {
        "monitor": "adult-weighted",
        "metric": {"type": "equalized_odds", "group": "race", "prediction": "graduate", "label": "rich", "groups": "all", "threshold": 0.1, "weight": "w", **metric},
        "estimator": {"min_trials": 1},
        "publish": {"min_cell": 1},
    }


def final(estimates: pd.DataFrame) -> pd.DataFrame:
    return estimates[estimates.time == estimates.time.max()]


@pytest.mark.parametrize("compare", ["pairs", "overall"])
def test_weighted_rates_and_gaps_equal_fairlearns_sample_weight(adult, compare):
    result = final(monitor_frame(adult, spec(compare=compare)).estimates)
    for part, metric in PARTS.items():
        frame = MetricFrame(metrics=metric, y_true=adult.rich, y_pred=adult.graduate, sensitive_features=adult.race, sample_params={"sample_weight": adult.w})
        rows = result[result.part == part].set_index("group")
        assert rows.rate.to_dict() == pytest.approx(frame.by_group.to_dict(), abs=1e-12)
        method = "between_groups" if compare == "pairs" else "to_overall"
        assert rows.raw_gap.iloc[0] == pytest.approx(frame.difference(method=method), abs=1e-12)
        positives = adult[adult.rich == (part == "true_positive_rate")]
        assert rows.trials.to_dict() == positives.race.value_counts().to_dict()  # whole trials, not weights
        assert rows.hits.to_dict() == positives[positives.graduate].race.value_counts().reindex(rows.index, fill_value=0).to_dict()


def test_demographic_parity_with_weights_equals_fairlearn(adult):
    result = final(monitor_frame(adult, spec(type="demographic_parity", label=None)).estimates)
    frame = MetricFrame(metrics=selection_rate, y_true=adult.rich, y_pred=adult.graduate, sensitive_features=adult.race, sample_params={"sample_weight": adult.w})
    assert result.set_index("group").rate.to_dict() == pytest.approx(frame.by_group.to_dict(), abs=1e-12)
    assert result.raw_gap.iloc[0] == pytest.approx(frame.difference(), abs=1e-12)


def kish(weights: pd.Series) -> float:
    return weights.sum() ** 2 / (weights**2).sum()


def wilson(p: float, n: float, alpha: float) -> tuple[float, float]:
    z = norm.ppf(1 - alpha / 2)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_the_floor_and_confident_intervals_count_effective_trials():
    rows = 400
    table = pd.DataFrame({
        "g": ["a", "b"] * (rows // 2),
        "hired": [index % 3 == 0 for index in range(rows)],
        "w": [50.0 if index < 20 else 1.0 for index in range(rows)],  # a few heavy trials: far fewer effective trials
    })  # fmt: skip
    body = {"monitor": "weighted-floor", "metric": {"type": "demographic_parity", "group": "g", "prediction": "hired", "groups": "all", "threshold": 0.1, "weight": "w"},
            "estimator": {"verdict": "confident", "interval": "wilson", "min_trials": 100}, "publish": {"min_cell": 1}}  # fmt: skip
    last = final(monitor_frame(table, body).estimates).set_index("group")
    for group in ("a", "b"):
        mine = table[table.g == group]
        n_eff = kish(mine.w)
        assert list(mine.index) and len(mine) == 200 and n_eff < 100  # enough trials, too few effective ones
        assert last.below_floor[group] and last.trials[group] == 200
    body["estimator"]["min_trials"] = 10
    last = final(monitor_frame(table, body).estimates).set_index("group")
    for group in ("a", "b"):
        mine = table[table.g == group]
        p = (mine.w * mine.hired).sum() / mine.w.sum()
        assert last.rate[group] == pytest.approx(p, abs=1e-12)
        assert (last.interval_low[group], last.interval_high[group]) == pytest.approx(wilson(p, kish(mine.w), 0.05), abs=1e-9)


def test_a_trial_with_a_negative_weight_is_incomplete_and_one_without_a_dead_letter():
    table = pd.DataFrame({"g": ["a", "b", "a", "b"], "hired": [True, False, True, True], "w": [1.0, -2.0, None, 3.0]})
    body = {"monitor": "weights-checked", "metric": {"type": "demographic_parity", "group": "g", "prediction": "hired", "groups": "all", "threshold": 0.1, "weight": "w"},
            "estimator": {"min_trials": 1}, "publish": {"min_cell": 1}}  # fmt: skip
    from fairstream.api import FairnessMonitor
    from fairstream.connectors.files import numbered_rows
    from fairstream.frames import frame_records

    monitor = FairnessMonitor.load(body)
    records = monitor.feed(list(numbered_rows(lambda: list(frame_records(table, monitor.time_field, monitor.time_format)))())) + monitor.close()
    last = [record for record in records if record["type"] == "fairness.estimate"][-1]
    assert last["trials"] == {"closed": 3, "incomplete": 1}  # the negative weight
    assert {group: cell["trials"] for group, cell in last["parts"]["selection_rate"]["groups"].items()} == {"a": 1, "b": 1}
    [letter] = [record for record in records if record["type"] == "pipeline.dead_letter"]  # the missing one: a missing field
    assert letter["reason"] == "missing_field" and "w" in letter["detail"]


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"estimator": {"verdict": "anytime"}}, "weighted rates take point or confident verdicts"),
        ({"metric": {"type": "delayed_impact", "outcome": "w", "weight": "w", "group": "g", "threshold": 0.1}}, "weight weighs the trials of a rate of events"),
    ],
)
def test_what_weights_cannot_go_with_is_refused(changes, said):
    body = {"monitor": "weights-refused", "metric": {"type": "demographic_parity", "group": "g", "prediction": "hired", "groups": "all", "threshold": 0.1, "weight": "w"}}
    body.update(changes)
    with pytest.raises(SpecError, match=said):
        load_plans([body])
