"""Groups given as probabilities through the whole run: JSON objects and CSV columns read alike, each group's estimate
and interval equal to statsmodels' least squares with HC1 errors on the same rows, bad vectors dead-lettered with
their reason (their columns redacted), a group outside the list named, and a spec that cannot use them refused."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
from click.testing import CliRunner
from scipy.stats import norm

from fairstream.cli import cli
from fairstream.compiler.load import check_spec
from fairstream.records.errors import SpecError

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
GROUPS = ("a", "b", "c")
RATES = np.array([0.60, 0.45, 0.52])
SPEC = """\
monitor: lending-proxy
input:
  time: time
  key: id
  kind: event
  kinds:
    APPLICATION: {{race_p: probabilities, approved: bool}}
trial: {{close_on: [APPLICATION]}}
variables:
  race: {{first: APPLICATION, field: race_p}}
  approved: {{first: APPLICATION, field: approved}}
metric: {{type: demographic_parity, group: race, prediction: approved, groups: [a, b, c], threshold: {threshold}}}
estimator: {{verdict: {verdict}, alpha: 0.05}}
evaluate: {{every: 1d}}
"""


def stream(trials: int, seed: int = 7):
    """A calibrated proxy stream: each applicant's vector from a Dirichlet, the true group drawn from it."""
    rng = np.random.default_rng(seed)
    probabilities = rng.dirichlet([0.6] * 3, size=trials)
    group = (rng.random(trials)[:, None] > np.cumsum(probabilities, axis=1)).sum(axis=1)
    return probabilities, rng.random(trials) < RATES[group]


def time_of(index: int) -> str:
    return f"2026-01-{index // 144 + 1:02d}T{index % 144 // 6:02d}:{index % 6 * 10:02d}:00Z"


def write_jsonl(path: Path, probabilities, approved, extra: list[dict] = ()) -> Path:
    with path.open("w") as out:
        for index, (vector, decision) in enumerate(zip(probabilities, approved)):
            record = {"time": time_of(index), "id": f"A{index}", "event": "APPLICATION", "race_p": dict(zip(GROUPS, vector.tolist())), "approved": bool(decision)}
            out.write(json.dumps(record) + "\n")
        for record in extra:
            out.write(json.dumps(record) + "\n")
    return path


def write_csv(path: Path, probabilities, approved) -> Path:
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["time", "id", "event", *(f"race_p_{group}" for group in GROUPS), "approved"])
        for index, (vector, decision) in enumerate(zip(probabilities, approved)):
            writer.writerow([time_of(index), f"A{index}", "APPLICATION", *map(repr, vector.tolist()), str(bool(decision)).lower()])
    return path


def run(tmp_path: Path, data: Path, verdict: str = "confident", threshold: float = 0.1, *options: str) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(verdict=verdict, threshold=threshold))
    out = tmp_path / f"out-{data.stem}-{data.suffix[1:]}-{len(options)}"
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(data), "--out", str(out), *options], env=ENV)
    assert result.exit_code in (0, 3), result.output
    return out


def records(out: Path, name: str) -> list[dict]:
    path = out / name
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def comparable(out: Path) -> list[dict]:
    return [{k: v for k, v in record.items() if k not in ("emitted_at", "chain")} for record in records(out, "estimates.jsonl")]


def test_estimates_are_least_squares_on_the_probabilities_and_csv_reads_as_json(tmp_path):
    probabilities, approved = stream(3000)
    from_json = run(tmp_path, write_jsonl(tmp_path / "stream.jsonl", probabilities, approved))
    from_csv = run(tmp_path, write_csv(tmp_path / "stream.csv", probabilities, approved))
    two_workers = run(tmp_path, tmp_path / "stream.jsonl", "confident", 0.1, "--workers", "2")
    assert comparable(from_json) == comparable(from_csv) == comparable(two_workers)
    last = records(from_json, "estimates.jsonl")[-1]
    assert last["trials"]["closed"] == 3000
    part = last["parts"]["selection_rate"]
    assert part["groups_from"] == "probabilities" and "through the group" in part["assumption"]
    ols = sm.OLS(approved.astype(float), probabilities).fit(cov_type="HC1")
    z = norm.ppf(1 - 0.05 / 2)
    for index, group in enumerate(GROUPS):
        cell = part["groups"][group]
        assert cell["estimate"] == pytest.approx(ols.params[index], rel=1e-9)
        assert cell["interval"] == pytest.approx([ols.params[index] - z * ols.bse[index], ols.params[index] + z * ols.bse[index]], rel=1e-6)
        weighted = (probabilities[:, index] * approved).sum() / probabilities[:, index].sum()
        assert cell["weighted_rate"] == pytest.approx(weighted, rel=1e-9)
        assert cell["weight"] == pytest.approx(probabilities[:, index].sum(), rel=1e-9)
        assert cell["bounds"][0] <= RATES[index] <= cell["bounds"][1]
    assert part["pair"] == ["a", "b"] and part["gap"] == pytest.approx(ols.params[0] - ols.params[1], rel=1e-9)


def test_an_unfair_stream_alerts_at_any_look_and_names_the_pair(tmp_path):
    probabilities, approved = stream(6000, seed=11)  # a gap of 0.15 against ε = 0.05
    out = run(tmp_path, write_jsonl(tmp_path / "stream.jsonl", probabilities, approved), "anytime", 0.05)
    violations = [record for record in records(out, "alerts.jsonl") if record["type"] == "fairness.violation"]
    assert violations and violations[0]["pair"] == ["a", "b"]
    assert violations[0]["interval_validity"] == "anytime" and violations[0]["interval"][0] > 0.05


def test_bad_vectors_are_dead_letters_with_their_reason_and_their_columns_redacted(tmp_path):
    probabilities, approved = stream(400)
    base = {"time": time_of(500), "event": "APPLICATION", "approved": True}
    bad = [
        {**base, "id": "neg", "race_p": {"a": 1.2, "b": -0.2}},
        {**base, "id": "sum", "race_p": {"a": 0.5, "b": 0.4}},
        {**base, "id": "text", "race_p": "white"},
        {**base, "id": "word", "race_p": {"a": "high", "b": 0.0}},
        {**base, "id": "none", "race_p": {}},
        {**base, "id": "missing"},
    ]
    out = run(tmp_path, write_jsonl(tmp_path / "stream.jsonl", probabilities, approved, bad))
    letters = {json.loads(letter["record"]).get("id", "?"): letter for letter in records(out, "dead_letters.jsonl")}
    assert {key: letter["reason"] for key, letter in letters.items()} == {
        "neg": "bad_probabilities", "sum": "bad_probabilities", "text": "wrong_type", "word": "wrong_type", "none": "wrong_type", "missing": "missing_field",
    }  # fmt: skip
    assert "'b' is negative" in letters["neg"]["detail"] and "do not sum to 1" in letters["sum"]["detail"]
    assert all("0.4" not in letter["detail"] and "-0.2" not in letter["detail"] for letter in letters.values())  # the values are redacted
    assert all(json.loads(letter["record"]).get("race_p", "<redacted>") == "<redacted>" for letter in letters.values())
    assert records(out, "estimates.jsonl")[-1]["trials"]["closed"] == 400

    csv_path = write_csv(tmp_path / "bad.csv", probabilities[:50], approved[:50])
    with csv_path.open("a") as more:
        more.write(f"{time_of(60)},X1,APPLICATION,0.7,0.7,-0.4,true\n")
    (letter,) = records(run(tmp_path, csv_path), "dead_letters.jsonl")
    assert letter["reason"] == "bad_probabilities"
    assert all(value == "<redacted>" for column, value in json.loads(letter["record"]).items() if column.startswith("race_p_"))


def test_a_group_outside_the_list_is_named_and_its_trials_left_out(tmp_path):
    probabilities, approved = stream(300)
    stray = [{"time": time_of(310 + i), "id": f"S{i}", "event": "APPLICATION", "race_p": {"a": 0.5, "d": 0.5}, "approved": True} for i in range(4)]
    last = records(run(tmp_path, write_jsonl(tmp_path / "stream.jsonl", probabilities, approved, stray)), "estimates.jsonl")[-1]
    assert last["unlisted_groups"] == {"d": 4}
    assert last["parts"]["selection_rate"]["groups"]["a"]["weight"] == pytest.approx(probabilities[:, 0].sum(), rel=1e-9)


@pytest.mark.parametrize(
    ("change", "path", "reason"),
    [
        ({"metric": {"group": ["race", "approved"]}}, "metric -> group", "stands alone"),
        ({"metric": {"type": "scoring_rate", "score": "approved", "prediction": None}}, "metric -> type", "cannot take groups given as probabilities"),
        ({"metric": {"groups": "all"}}, "metric -> groups", "list the groups"),
        ({"variables": {"rich": {"first": "APPLICATION", "expr": "race_p > 0.5"}}}, "variables -> rich -> expr", "holds group probabilities"),
    ],
)
def test_a_spec_that_cannot_use_probabilities_is_refused_with_its_field(change, path, reason):
    import yaml

    spec = yaml.safe_load(SPEC.format(verdict="confident", threshold=0.1))
    for section, values in change.items():
        spec[section].update(values)
    spec["metric"] = {key: value for key, value in spec["metric"].items() if value is not None}
    with pytest.raises(SpecError) as raised:
        check_spec(spec)
    assert path in str(raised.value) and reason in str(raised.value)
