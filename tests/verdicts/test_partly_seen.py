"""Labels seen only for approved loans: the plain label gives a true-positive rate of 1.0 for every group; declared as
partly seen, each group's worst-case bounds contain its true rate (computed from the complete simulated data, unseen
labels included), the inverse-propensity interval covers it on at least 1 − α of streams, and the records of a run
equal a pandas computation of coverage, bounds and weighted estimates."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

from fairstream.connectors.files import write_jsonl
from fairstream.runner import run_file
from fairstream.trials.outcomes import partly_seen
from fairstream.verdicts.partly_seen import manski_bounds, weighted_rate

ALPHA = 0.05
REPAY = {"a": 0.75, "b": 0.6}
"""Probability of repaying, by group; approval depends on a score that predicts repayment, and on the group."""


def lending(applicants: int, seed: int) -> pd.DataFrame:
    """Complete data: group, score, would-repay (seen only if approved), approval propensity and decision."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b"], applicants)
    repays = rng.random(applicants) < np.vectorize(REPAY.get)(group)
    score = np.clip(0.5 + 0.25 * np.where(repays, 1, -1) + rng.normal(0, 0.25, applicants), 0, 1)
    propensity = np.clip(np.where(group == "a", 0.15 + 0.8 * score, 0.05 + 0.7 * score), 0.05, 0.95)
    approved = rng.random(applicants) < propensity
    return pd.DataFrame({"id": [f"p{i}" for i in range(applicants)], "group": group, "repays": repays, "propensity": propensity, "approved": approved})


def true_tpr(frame: pd.DataFrame) -> dict[str, float]:
    """P(approved | would repay) per group, over the decision's randomness: E[π · y] / E[y] on the complete data."""
    return {group: float((rows.propensity * rows.repays).sum() / rows.repays.sum()) for group, rows in frame.groupby("group")}


def group_sums(rows: pd.DataFrame) -> list[float]:
    """The numbers the monitor sums for one group's true-positive rate, built by the partly-seen rule per trial."""
    cells = [partly_seen("tpr", bool(r.approved), bool(r.approved), bool(r.repays) if r.approved else None, 1 / r.propensity, True) for r in rows.itertuples()]
    return [*np.sum(cells, axis=0), len(rows)]


def test_the_bounds_contain_each_groups_true_rate_and_the_plain_label_does_not():
    frame = lending(5000, seed=1)
    truth = true_tpr(frame)
    for group, rows in frame.groupby("group"):
        low, high = manski_bounds(group_sums(rows))
        assert low <= truth[group] <= high
        seen = rows[rows.approved]
        assert seen.approved[seen.repays].mean() == 1.0  # what a plain label reports: TPR 1.0, among approved only
    assert abs(truth["a"] - truth["b"]) > 0.1


def test_the_weighted_interval_covers_the_true_rate_on_at_least_one_minus_alpha_of_streams():
    covered = 0
    for seed in range(200):
        frame = lending(1500, seed=100 + seed)
        truth = true_tpr(frame)
        rows = frame[frame.group == "a"]
        _, _, (low, high) = weighted_rate(group_sums(rows), ALPHA)
        covered += low <= truth["a"] <= high
    assert covered / 200 >= 1 - ALPHA - 2 * math.sqrt(ALPHA * (1 - ALPHA) / 200)


SPEC = {
    "monitor": "loans",
    "input": {"time": "day", "time_format": "epoch_s", "key": "id", "kind": "event",
              "kinds": {"APPLY": {"group": "str", "propensity": "float"}, "DECISION": {"approved": "bool"}, "REPAY": {"repaid": "bool"}}},
    "trial": {"opens_on": ["APPLY"], "close_after": "1h"},
    "variables": {"group": {"first": "APPLY", "field": "group"}, "propensity": {"first": "APPLY", "field": "propensity"},
                  "approved": {"first": "DECISION", "field": "approved"}, "repaid": {"first": "REPAY", "field": "repaid"}},
    "metric": {"type": "equal_opportunity", "group": "group", "prediction": "approved", "threshold": 0.1,
               "label": {"variable": "repaid", "observed_when": "approved"}},
    "estimator": {"prior": 0.5, "confidence": 0, "min_trials": 1},
    "evaluate": {"every": "1d"},
}  # fmt: skip


def events(frame: pd.DataFrame) -> list[dict]:
    found = []
    for minute, row in enumerate(frame.itertuples()):
        found.append({"event": "APPLY", "id": row.id, "day": minute, "group": row.group, "propensity": float(row.propensity)})
        found.append({"event": "DECISION", "id": row.id, "day": minute, "approved": bool(row.approved)})
        if row.approved:
            found.append({"event": "REPAY", "id": row.id, "day": minute, "repaid": bool(row.repays)})
    return found


@pytest.mark.parametrize("propensity", [False, True], ids=["bounds", "weighted"])
def test_a_run_publishes_coverage_bounds_and_weighted_estimates_as_pandas_computes_them(tmp_path, propensity):
    frame = lending(3000, seed=7)
    write_jsonl(tmp_path / "loans.jsonl", events(frame))
    spec = {**SPEC, "metric": {**SPEC["metric"], **({"propensity": "propensity"} if propensity else {})}, "estimator": {**SPEC["estimator"], "verdict": "confident"}}
    (tmp_path / "loans.yaml").write_text(yaml.safe_dump(spec))
    last = run_file(tmp_path / "loans.yaml", tmp_path / "loans.jsonl", tmp_path / "out").read("estimates.jsonl")[-1]
    part = last["parts"]["true_positive_rate"]
    truth = true_tpr(frame)
    for group, rows in frame.groupby("group"):
        cell = part["groups"][group]
        assert cell["coverage"] == pytest.approx(rows.approved.mean())
        seen_repaid = (rows.approved & rows.repays).sum()
        assert cell["bounds"] == pytest.approx([seen_repaid / (seen_repaid + (~rows.approved).sum()), 1.0])
        if propensity:
            weighted = (rows.approved & rows.repays).sum() / (rows.repays[rows.approved] / rows.propensity[rows.approved]).sum()
            assert cell["estimate"] == pytest.approx(weighted)
            assert cell["interval"][0] <= truth[group] <= cell["interval"][1]
        else:
            assert cell["estimate"] is None  # never a plain estimate from the seen labels alone
    assert part["labels"] == ("weighted" if propensity else "bounded")
    assert part["status"] == ("violated" if propensity else "inconclusive")  # the bounds alone cannot decide a 0.17 gap


def test_a_plain_label_missing_on_one_side_of_the_prediction_is_withheld_and_one_missing_at_random_is_not(tmp_path):
    """Repayment seen only for approved loans under a plain `label`: no estimate, the missing labels counted, a warning;
    the same stream with labels missing for a random fifth of all loans instead keeps its estimates."""
    from click.testing import CliRunner

    from fairstream.cli import cli

    frame = lending(2000, seed=9)
    plain = {**SPEC, "metric": {**SPEC["metric"], "label": "repaid"}}
    (tmp_path / "plain.yaml").write_text(yaml.safe_dump(plain))
    write_jsonl(tmp_path / "selective.jsonl", events(frame))
    rng = np.random.default_rng(9)
    every_label = events(frame.assign(approved=True))  # a REPAY event for every loan ...
    decisions = {row.id: bool(row.approved) for row in frame.itertuples()}
    missing_at_random = [
        {**e, "approved": decisions[e["id"]]} if e["event"] == "DECISION" else e  # ... with the real decisions
        for e in every_label
        if not (e["event"] == "REPAY" and rng.random() < 0.2)
    ]
    write_jsonl(tmp_path / "random.jsonl", missing_at_random)
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "plain.yaml"), "--input", str(tmp_path / "selective.jsonl"), "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "the labels missing for a, b all share one prediction" in result.output
    last = run_file(tmp_path / "plain.yaml", tmp_path / "selective.jsonl", tmp_path / "s2").read("estimates.jsonl")[-1]
    for group, rows in frame.groupby("group"):
        cell = last["parts"]["true_positive_rate"]["groups"][group]
        assert (cell["estimate"], cell["labels"], cell["unlabeled"], cell["unlabeled_predicted"]) == (None, "selective", (~rows.approved).sum(), 0)
    assert last["trials"]["incomplete"] == (~frame.approved).sum()
    kept = run_file(tmp_path / "plain.yaml", tmp_path / "random.jsonl", tmp_path / "r").read("estimates.jsonl")[-1]
    assert all(cell["estimate"] is not None and "labels" not in cell for cell in kept["parts"]["true_positive_rate"]["groups"].values())
