"""The κ × ε sweep: verdicts recomputed from one κ = 0 run equal the monitor's own at each grid point; the `fairstream tune` command."""

from __future__ import annotations

import math

import numpy as np
import orjson
import pytest
from click.testing import CliRunner
from matplotlib.image import imread

from fairstream.cli import cli
from fairstream.connectors.synthetic.seminar import ALGORITHMS, seminar_events
from fairstream.lab.studies.runs import monitor_records, tuned_plan
from fairstream.lab.studies.tuning import CSP_SPEC, DEFAULT_SPEC, Counts, alerts, counts_of, run_tuning, triggers, verdicts

ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
POINTS = [(10.0, 0.1), (30.0, 0.085)]
SCENARIOS = [("Randomize", 2), ("EqualGender", 0), ("FCFS", 1)]
"""Scenarios that trigger at both grid points, so that the comparison covers violated verdicts and alerts."""


def monitor_verdicts(records, parts):
    """Per estimate record, each part's verdict as the monitor reports it: 1, 0 or NaN while undefined."""
    rows = []
    for record in records:
        if record["type"] == "fairness.estimate":
            verdict = [record["parts"].get(part, {}).get("violated") for part in parts]
            rows.append([math.nan if v is None else float(v) for v in verdict])
    return np.array(rows)


@pytest.mark.parametrize(("spec", "floor"), [(DEFAULT_SPEC, 1), (CSP_SPEC, 1), (DEFAULT_SPEC, 15)])
@pytest.mark.parametrize(("algorithm", "seed"), SCENARIOS)
def test_grid_verdicts_from_one_run_equal_running_the_monitor_at_each_point(algorithm, seed, spec, floor):
    events = seminar_events(algorithm, seed)
    counts = counts_of(monitor_records(tuned_plan(spec, confidence=0.0, min_trials=floor), events))
    kappas, epsilons = [k for k, _ in POINTS], [e for _, e in POINTS]
    grid = verdicts(counts, kappas, epsilons, floor)
    for k, (kappa, epsilon) in enumerate(POINTS):
        records = monitor_records(tuned_plan(spec, confidence=kappa, threshold=epsilon, min_trials=floor), events)
        direct = monitor_verdicts(records, counts.parts)
        assert np.array_equal(grid[k, k], direct, equal_nan=True)
        assert triggers(grid)[k, k] == int((direct == 1).any(axis=1).sum()) > 0
        assert alerts(grid)[k, k] == sum(record["type"] == "fairness.violation" and record["part"] in counts.parts for record in records)


def test_alerts_count_turns_to_violated_and_undefined_verdicts_change_nothing():
    nan = math.nan
    one_part = np.array([0, 1, nan, 1, 0, nan, 1, 1])[None, None, :, None]
    assert alerts(one_part).tolist() == [[2]]
    assert triggers(one_part).tolist() == [[4]]
    two_parts = np.array([[nan, 1], [1, 1], [0, 0], [1, 1]])[None, None]
    assert alerts(two_parts).tolist() == [[4]]
    assert triggers(two_parts).tolist() == [[3]]


def test_verdicts_need_two_groups_with_trials_and_a_prior_unless_kappa_is_zero():
    hits = np.array([[[1, 0]], [[1, 0]], [[1, 0]]], dtype=float)
    trials = np.array([[[1, 0]], [[1, 1]], [[1, 1]]], dtype=float)
    counts = Counts(("s",), ("f", "m"), hits, trials, np.array([0.5, np.nan, 0.5]))
    result = verdicts(counts, [0, 1], [0.5])[:, 0, :, 0]
    assert np.array_equal(result, [[np.nan, 1.0, 1.0], [np.nan, np.nan, 0.0]], equal_nan=True)


def test_randomize_triggers_more_often_than_equal_gender():
    tuning = run_tuning(100, 100, [30.0], [0.1], spec=CSP_SPEC)
    randomize, equal_gender = (tuning.triggers[tuning.algorithms.index(name), 0, 0] for name in ("Randomize", "EqualGender"))
    assert randomize > 2 * equal_gender
    assert tuning.ratio()[0, 0] == randomize / equal_gender


def table_rows(output: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split("│")] for line in output.splitlines() if "│" in line]


def test_tune_prints_the_grid_and_writes_json_and_a_1600_by_900_heatmap(tmp_path):
    out = tmp_path / "tuning"
    args = ["tune", "--scenarios", "20", "--kappa", "80,30", "--epsilon", "0.1,0.085", "--out", str(out)]
    result = CliRunner().invoke(cli, args, env=ENV)
    assert result.exit_code == 0, result.output + repr(result.exception)

    expected = run_tuning(20, 100, [30.0, 80.0], [0.085, 0.1])
    assert orjson.loads((out / "tuning.json").read_bytes()) == orjson.loads(orjson.dumps(expected.to_json()))
    assert imread(out / "tuning.png").shape[:2] == (900, 1600)

    lines = result.stdout.splitlines()
    assert lines[0] == "spec: seminar_demographic_parity (demographic_parity)"
    assert lines[1].strip() == "Triggers (scenarios with an alert) over 20 scenarios × 100 applicants"
    assert [cell.strip() for cell in lines[2].split("┃")] == ["κ", "ε", *ALGORITHMS, "Randomize/EqualGender"]
    r, q = expected.algorithms.index("Randomize"), expected.algorithms.index("EqualGender")
    for row, (k, e) in zip(table_rows(result.stdout), np.ndindex(2, 2), strict=True):
        assert row[:2] == [f"{expected.kappas[k]:g}", f"{expected.epsilons[e]:g}"]
        assert row[2:6] == [f"{expected.triggers[a, k, e]} ({expected.flagged[a, k, e]})" for a in range(4)]
        top, bottom = expected.triggers[r, k, e], expected.triggers[q, k, e]
        assert row[6] == (f"{top / bottom:.3g}×" if bottom else f"{top}/0")
    ratios = [line for line in lines if line.startswith("Randomize/EqualGender at")]
    assert [line.split(":")[0] for line in ratios] == ["Randomize/EqualGender at κ = 30, ε = 0.1", "Randomize/EqualGender at κ = 80, ε = 0.1"]
    assert lines[-2] == f"wrote {out / 'tuning.json'} and {out / 'tuning.png'}"
    assert lines[-1].startswith("80 monitor runs in ")


def test_tune_rejects_a_grid_that_is_not_a_list_of_numbers_in_range():
    result = CliRunner().invoke(cli, ["tune", "--epsilon", "0.1,1.5"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "Error: Invalid value for '--epsilon': every value must be in (0, 1]; got 1.5"
    result = CliRunner().invoke(cli, ["tune", "--kappa", "30,many"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "Error: Invalid value for '--kappa': expected comma-separated numbers such as 10,30,54; got '30,many'"


def test_tune_takes_the_per_seminar_spec_and_refuses_a_non_point_one(tmp_path):
    result = CliRunner().invoke(cli, ["tune", "--scenarios", "2", "--spec", "seminar_conditional_statistical_parity", "--out", str(tmp_path / "csp")], env=ENV)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "spec: seminar_conditional_statistical_parity (conditional_statistical_parity)"
    anytime = tmp_path / "anytime.yaml"
    anytime.write_text(DEFAULT_SPEC.read_text().replace("  min_trials: 1", "  verdict: anytime\n  min_trials: 1"))
    result = CliRunner().invoke(cli, ["tune", "--scenarios", "2", "--spec", str(anytime), "--out", str(tmp_path / "x")], env=ENV)
    assert result.exit_code == 1
    assert result.stderr.strip().endswith("tune recomputes point verdicts from counts; the spec asks for anytime verdicts")
