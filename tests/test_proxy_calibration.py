"""A proxy's calibration, tested where the truth is known: with `truth:` naming a field that 15 % of applicants fill with
their self-reported group, probabilities shrunk halfway to uniform are found miscalibrated (a warning line, the record's
`calibration`), and each group's rate recalibrated on those applicants is published beside the estimate, equal to a
least-squares recalibration and regression done here with numpy and statsmodels; calibrated probabilities say nothing;
a truth that checks nothing is refused; simulated streams hold the test's level and find shrunk and sharpened proxies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
import yaml
from click.testing import CliRunner

from fairstream import metrics
from fairstream.cli import cli
from fairstream.compiler.load import check_spec
from fairstream.estimators.proxy import ProxyLayout
from fairstream.estimators.proxy_calibration import LEVEL, calibration
from fairstream.records.errors import SpecError
from fairstream.verdicts.judge import VerdictRule
from fairstream.verdicts.proxy import proxy_lines, proxy_part

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
GROUPS = ("a", "b", "c")
RATES = np.array([0.60, 0.45, 0.52])
SPEC = {
    "monitor": "lending-proxy",
    "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"APPLICATION": {"race_p": "probabilities", "approved": "bool"}}},
    "trial": {"close_on": ["APPLICATION"]},
    "variables": {"race": {"first": "APPLICATION", "field": "race_p", "truth": "race_self"}, "approved": {"first": "APPLICATION", "field": "approved"}},
    "metric": {"type": "demographic_parity", "group": "race", "prediction": "approved", "groups": list(GROUPS), "threshold": 0.1},
    "estimator": {"verdict": "confident", "alpha": 0.05},
    "evaluate": {"every": "1d"},
}


def applicants(seed: int, n: int, kind: str, reported: float = 0.15):
    """Each applicant's true group drawn from a Dirichlet vector, approved with its group's rate; the proxy gives that
    vector (calibrated), or shrinks it halfway to uniform, or sharpens it (squared and normalised); a share of
    applicants also reports the true group."""
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet([0.6] * 3, size=n)
    group = (rng.random(n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
    approved = rng.random(n) < RATES[group]
    given = {"calibrated": truth, "shrunk": (truth + 1 / 3) / 2, "sharpened": truth**2 / (truth**2).sum(axis=1, keepdims=True)}[kind]
    says = rng.random(n) < reported
    return given, approved, np.where(says, group, -1)


def write(path: Path, probabilities, approved, truths) -> Path:
    with path.open("w") as out:
        for index, (vector, decision, truth) in enumerate(zip(probabilities, approved, truths)):
            record = {"time": f"2026-01-{index // 1440 + 1:02d}T{index % 1440 // 60:02d}:{index % 60:02d}:00Z", "id": f"A{index}", "event": "APPLICATION",
                      "race_p": dict(zip(GROUPS, vector.tolist())), "approved": bool(decision)}  # fmt: skip
            if truth >= 0:
                record["race_self"] = GROUPS[truth]
            elif index % 3 == 0:
                record["race_self"] = None  # null reads as not reported, as absent does
            out.write(json.dumps(record) + "\n")
    return path


def run(tmp_path: Path, kind: str):
    probabilities, approved, truths = applicants(11, 3000, kind)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(SPEC))
    data = write(tmp_path / f"{kind}.jsonl", probabilities, approved, truths)
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "spec.yaml"), "--input", str(data), "--out", str(tmp_path / kind)], env=ENV)
    assert result.exit_code in (0, 3), result.output
    gauge = metrics.REGISTRY.get_sample_value("fairstream_proxy_calibrated", {"monitor": "lending-proxy", "part": "selection_rate"})
    assert gauge == (0.0 if kind == "shrunk" else 1.0)  # what the last estimate's calibration says
    last = [json.loads(line) for line in (tmp_path / kind / "estimates.jsonl").read_text().splitlines()][-1]
    return result, last["parts"]["selection_rate"], (probabilities, approved, truths)


def reference_recalibrated(probabilities, approved, truths) -> np.ndarray:
    """Recalibrate by least squares on the self-reported applicants, then each group's rate as the regression of the
    approvals on the recalibrated vectors (no intercept), over the regression of 1 on them."""
    reported = truths >= 0
    y = np.eye(3)[truths[reported]]
    p = probabilities[reported]
    mapping = np.linalg.lstsq(p, y, rcond=None)[0].T  # E[y | p] ≈ A p
    q = probabilities @ mapping.T
    hits = sm.OLS(approved.astype(float), q).fit().params
    members = sm.OLS(np.ones(len(q)), q).fit().params
    return hits / members


def test_shrunk_probabilities_are_found_and_recalibrated_estimates_published(tmp_path):
    result, body, stream = run(tmp_path, "shrunk")
    checked = body["calibration"]
    assert checked["held"] is False and checked["level"] == LEVEL and checked["sample"] == int((stream[2] >= 0).sum())
    assert checked["worst"]["statistic"] == "spread" and checked["worst"]["mean"] > checked["worst"]["half_width"] > 0
    assert "the proxy's probabilities are not calibrated on the" in " ".join(result.stderr.split())
    recalibrated = np.array([body["groups"][group]["recalibrated_estimate"] for group in GROUPS])
    estimates = np.array([body["groups"][group]["estimate"] for group in GROUPS])
    assert recalibrated == pytest.approx(reference_recalibrated(*stream), abs=1e-9)
    assert np.abs(recalibrated - RATES).max() < 0.06 < np.abs(estimates - RATES).max()  # the shrunk proxy doubles the gaps
    assert "raw_gap" not in body and body["interval_of"] == "gap"  # the gap is of the moment estimates


def test_calibrated_probabilities_say_nothing(tmp_path):
    result, body, _ = run(tmp_path, "calibrated")
    assert body["calibration"]["held"] is True
    assert all("recalibrated_estimate" not in cell for cell in body["groups"].values())
    assert "not calibrated" not in result.stderr


def test_a_truth_that_checks_no_probabilities_is_refused():
    spec = {**SPEC, "input": {**SPEC["input"], "kinds": {"APPLICATION": {"race": "str", "approved": "bool"}}}}
    spec["variables"] = {**SPEC["variables"], "race": {"first": "APPLICATION", "field": "race", "truth": "race_self"}}
    with pytest.raises(SpecError) as error:
        check_spec(spec, "spec.yaml")
    assert "variables -> race -> truth" in str(error.value) and "truth checks a proxy's probabilities" in str(error.value)


@pytest.mark.parametrize(("kind", "flagged"), [("calibrated", False), ("shrunk", True), ("sharpened", True)])
def test_the_test_holds_its_level_and_finds_a_miscalibrated_proxy(kind, flagged):
    layout, runs = ProxyLayout(GROUPS, calibration=True), 40
    found = 0
    for seed in range(runs):
        probabilities, approved, truths = applicants(1000 + seed, 3000, kind)
        found += calibration(layout, layout.sums(probabilities, approved, np.ones(3000, bool), truths)).held is False
    assert found / runs >= 0.95 if flagged else found / runs <= 0.05


def test_a_rate_outside_the_unit_interval_is_said_as_a_sign_of_miscalibration():
    """Group c's probability halved (and the vector normalised again) on a stream where c is approved at 0.1: its moment
    estimate falls below 0, beside an expected trial count far under its true share."""
    rng = np.random.default_rng(3)
    truth = rng.dirichlet([2.0] * 3, size=3000)
    group = (rng.random(3000)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
    approved = rng.random(3000) < np.array([0.9, 0.8, 0.1])[group]
    halved = truth * [1, 1, 0.5]
    halved /= halved.sum(axis=1, keepdims=True)
    layout = ProxyLayout(GROUPS)
    body = proxy_part([*layout.sums(halved, approved, np.ones(3000, bool)), 3000], layout, VerdictRule(threshold=0.1), level=lambda _pair: 0.05, min_trials=30)
    assert body["groups"]["c"]["estimate"] < 0 and body["outside_unit"] == ["c"]
    (line,) = proxy_lines({"monitor": "m", "parts": {"selection_rate": body}})
    assert line.startswith("monitor m, selection_rate: the estimated rate of c lies outside [0, 1], a sign the proxy's probabilities are not calibrated")
