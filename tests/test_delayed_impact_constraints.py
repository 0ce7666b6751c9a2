"""ELF's delayed-impact constraints: per group a one-sided bound on the mean outcome (Student t or Hoeffding) at the
group's share of δ (δ/2 each for the two listed groups) certifies E[outcome | group] ≥ τ (or ≤ τ), τ fixed or each
group's own baseline mean, itself bounded as a second sample; a group its bound cannot certify alerts once. Checked
against scipy, the Hoeffding closed form and a pandas computation of every day."""

from __future__ import annotations

import math

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml
from scipy import stats

from fairstream.compiler.load import load_plan
from fairstream.records.errors import SpecError
from fairstream.runner import run_file

FLOOR = 30
"""The constraints' default evidence floor."""


@pytest.fixture(scope="module")
def loans(tmp_path_factory):
    """Repayment shares over 20 days: group a around 0.71, group b 0.5 that improves to 0.8 after day 10."""
    rng = np.random.default_rng(7)
    rows = []
    for index in range(1200):
        day, group = index // 60, "a" if index % 2 else "b"
        mean_b = 0.5 if day < 10 else 0.8
        repaid = rng.beta(5, 2) if group == "a" else float(np.clip(rng.normal(mean_b, 0.2), 0, 1))
        time = pd.Timestamp("2024-01-01") + pd.Timedelta(days=day, minutes=20 * (index % 60))
        rows.append({"event": "LOAN", "id": str(index), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ"), "group": group, "repaid": float(repaid)})
    folder = tmp_path_factory.mktemp("elf")
    path = folder / "loans.jsonl"
    path.write_bytes(b"".join(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE) for row in rows))
    frame = pd.DataFrame(rows)
    frame["tick"] = pd.to_datetime(frame.time).dt.tz_localize(None).dt.ceil("D")
    return path, frame


def write_spec(folder, constraints, **metric):
    spec = {
        "monitor": "loans-elf",
        "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"LOAN": {"group": "str", "repaid": "float"}}},
        "trial": {"close_on": ["LOAN"]},
        "variables": {"group": {"first": "LOAN", "field": "group"}, "repaid": {"first": "LOAN", "field": "repaid"}},
        "metric": {"type": "delayed_impact", "group": "group", "outcome": "repaid", "constraints": constraints, "groups": ["a", "b"], **metric},
        "estimator": {"outcome_range": [0, 1]},
        "evaluate": {"every": "1d"},
        "publish": {"min_cell": 1},
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def t_lower(values, delta):
    return values.mean() - stats.t.ppf(1 - delta, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))


def hoeffding_lower(values, delta):
    return max(0.0, values.mean() - math.sqrt(math.log(1 / delta) / (2 * len(values))))


def test_every_day_each_group_bound_and_certificate_equal_scipy(loans, tmp_path):
    path, frame = loans
    constraints = [{"tau": 0.6, "delta": 0.05}, {"tau": 0.6, "delta": 0.2, "bound": "hoeffding", "name": "hoeffding_0_6"}]
    records = run_file(write_spec(tmp_path, constraints), path, tmp_path / "out").read("estimates.jsonl")
    assert [r["event_time"][:10] for r in records] == [t.strftime("%Y-%m-%d") for t in sorted(frame.tick.unique())]
    for record in records:
        closed = frame[frame.tick <= pd.Timestamp(record["event_time"][:19])]
        for part, delta, lower in (("mean_outcome>=0.6", 0.05 / 2, t_lower), ("hoeffding_0_6", 0.2 / 2, hoeffding_lower)):
            body = record["parts"][part]
            for group, values in closed.groupby("group").repaid:
                cell = body["groups"][group]
                assert cell["estimate"] == pytest.approx(values.mean(), abs=1e-12) and cell["trials"] == len(values)
                if len(values) < FLOOR:
                    assert cell.get("below_floor") and "certified" not in cell
                    continue
                assert cell["bound"] == pytest.approx(lower(values, delta), abs=1e-9)
                assert cell["g_upper"] == pytest.approx(0.6 - lower(values, delta), abs=1e-9)
                assert cell["certified"] == (lower(values, delta) >= 0.6)
            assert body["failing"] == sorted(g for g, c in body["groups"].items() if c.get("certified") is False)


def test_one_alert_per_group_when_its_constraint_turns_uncertified_and_one_when_certified_again(loans, tmp_path):
    path, frame = loans
    result = run_file(write_spec(tmp_path, [{"tau": 0.6, "delta": 0.05}]), path, tmp_path / "out")
    expected = []
    state: dict[str, bool] = {}
    for tick in sorted(frame.tick.unique()):
        closed = frame[frame.tick <= tick]
        for group, values in sorted(closed.groupby("group").repaid):
            if len(values) < FLOOR:
                continue
            failing = t_lower(values, 0.05 / 2) < 0.6
            if failing != state.get(group, False):
                state[group] = failing
                expected.append(("fairness.violation" if failing else "fairness.recovered", pd.Timestamp(tick).strftime("%Y-%m-%d"), group))
    alerts = result.read("alerts.jsonl")
    assert [(a["type"], a["event_time"][:10], a["group"]) for a in alerts] == expected
    assert expected[0][0] == "fairness.violation" and expected[0][2] == "b"  # b starts below τ ...
    assert expected[-1][0] == "fairness.recovered" and expected[-1][2] == "b"  # ... and is certified once it improved
    assert all(a["part"] == "mean_outcome>=0.6" and a["constraint"]["delta"] == 0.05 for a in alerts)


def test_a_baseline_tau_is_each_groups_mean_over_the_baseline_and_the_rest_is_judged_against_it(loans, tmp_path):
    path, frame = loans
    records = run_file(write_spec(tmp_path, [{"tau": {"baseline": "10d"}, "direction": "at_most", "delta": 0.1}]), path, tmp_path / "out").read(
        "estimates.jsonl"
    )
    first = frame.tick.min()
    baseline = frame[frame.tick < first + pd.Timedelta(days=10)]
    after = frame[frame.tick >= first + pd.Timedelta(days=10)]
    body = records[-1]["parts"]["mean_outcome<=baseline(10d)"]
    for group, values in after.groupby("group").repaid:
        cell = body["groups"][group]
        before = baseline[baseline.group == group].repaid
        tau = before.mean()
        # δ = 0.1, half to each listed group, and each half split again between the later mean and the baseline's
        upper = values.mean() + stats.t.ppf(1 - 0.025, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
        tau_lower = tau - stats.t.ppf(1 - 0.025, len(before) - 1) * before.std(ddof=1) / math.sqrt(len(before))
        assert cell["tau"] == pytest.approx(tau, abs=1e-12)
        assert cell["estimate"] == pytest.approx(values.mean(), abs=1e-9)
        assert cell["bound"] == pytest.approx(upper, rel=1e-6)
        assert cell["tau_bound"] == pytest.approx(tau_lower, rel=1e-6)
        assert cell["certified"] == (upper <= tau_lower)
    assert body["failing"] == ["a", "b"]  # b rose above its baseline; a stayed at it, which a bound cannot certify as "no higher"
    before = [r for r in records if r["event_time"] < (first + pd.Timedelta(days=10)).strftime("%Y-%m-%d")]
    assert all(c["tau"] is None for r in before for c in r["parts"]["mean_outcome<=baseline(10d)"]["groups"].values())


@pytest.mark.parametrize(
    ("constraints", "metric", "message"),
    [
        ([{"tau": 0.6}, {"tau": 0.6, "delta": 0.1}], {}, "two constraints would both be named 'mean_outcome>=0.6'; give one a name"),
        ([], {}, "threshold is required (delayed_impact may give constraints instead)"),
        ([{"tau": 0.6, "delta": 1.5}], {}, "metric -> constraints -> 0 -> delta: Input should be less than 1"),
    ],
)
def test_bad_constraints_fail_at_load(tmp_path, constraints, metric, message):
    with pytest.raises(SpecError) as caught:
        load_plan(write_spec(tmp_path, constraints, **metric))
    assert message in str(caught.value)


def test_anytime_verdicts_bet_on_the_rescaled_gap_and_certify_by_confidence_sequences(loans, tmp_path):
    """The gap verdict is the betting test on k-th-with-k-th pairs of outcomes (log-wealth as `log_wealth_paths` computes
    it from the data); each constraint's bound is the group's confidence sequence fed its outcomes in opening order
    (here each loan opens and closes at once), at the group's share of δ."""
    from fairstream.estimators.betting import log_wealth_paths
    from fairstream.estimators.sequence import MeanSequence

    path, frame = loans
    spec = write_spec(tmp_path, [{"tau": 0.6, "delta": 0.1}], threshold=0.1)
    body = yaml.safe_load(spec.read_text())
    body["estimator"].update(verdict="anytime", alpha=0.05, outcome_range=[0, 1])
    spec.write_text(yaml.safe_dump(body))
    result = run_file(spec, path, tmp_path / "out")
    records, alerts = result.read("estimates.jsonl"), result.read("alerts.jsonl")
    ordered = frame.sort_values("time")
    a, b = (ordered[ordered.group == g].repaid.to_numpy() for g in ("a", "b"))
    paired = ordered.iloc[ordered.group.ne(ordered.group.iloc[0]).argmax() :]  # a test opens once both groups exist
    pa, pb = (paired[paired.group == g] for g in ("a", "b"))
    pairs = min(len(pa), len(pb))
    x, y = pa.repaid.to_numpy()[:pairs], pb.repaid.to_numpy()[:pairs]
    wealth = log_wealth_paths(np.stack([x - y - 0.1, y - x - 0.1]))
    final = records[-1]["parts"]
    assert final["mean_outcome"]["log_wealth"] == pytest.approx(wealth[:, -1].max(), abs=1e-9)
    first_pair = int(np.argmax((wealth >= math.log(2 / 0.05)).any(axis=0)))  # the pair whose close rejected "gap ≤ ε"
    closes = max(pa.tick.iloc[first_pair], pb.tick.iloc[first_pair])
    gap_alerts = [x for x in alerts if x["part"] == "mean_outcome"]
    assert [(x["type"], x["event_time"][:10]) for x in gap_alerts] == [("fairness.violation", closes.strftime("%Y-%m-%d"))]
    for group, values in (("a", a), ("b", b)):
        sequence_ = MeanSequence(0.0, 1.0)
        for x in values:
            sequence_.update(float(x))
        cell = final["mean_outcome>=0.6"]["groups"][group]
        assert cell["bound"] == pytest.approx(sequence_.bounds(0.05)[0], abs=1e-12)
        assert cell["certified"] == (sequence_.bounds(0.05)[0] >= 0.6)
    assert final["mean_outcome>=0.6"]["constraint"]["bound"] == "betting"
