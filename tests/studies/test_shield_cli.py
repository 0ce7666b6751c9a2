"""`fairstream shield`: synthesize, simulate (its vectorized rule against `EnergyShield.decide`) and compare."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.image import imread
from sklearn.metrics import accuracy_score

from fairstream.cli import cli
from fairstream.lab.studies.shields import SHIELDS, compare, parity_path
from fairstream.shields import Counts, EnergyShield, MonotoneFamily, Target, synthesize
from fairstream.shields.energy.simulation import shield_paths
from fairstream.shields.energy.synthesis import NONE_MEETS
from tests.helpers import needs_data, reference_file

ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
TARGET = ["--p", "0.3", "--running", "0.4,0.6", "--limit", "0.45,0.55", "--burn-in", "50"]
UNREACHABLE = ["--p", "0.3", "--running", "0.45,0.55", "--limit", "0.49,0.51", "--burn-in", "5", "--horizon", "200", "--lambda", "0.001"]
"""A narrow S from τ = 5: even the steepest member violates with probability 1, so no member meets λ."""


def invoke(*args: str):
    return CliRunner(env=ENV).invoke(cli, ["shield", *args])


def test_synthesize_prints_the_member_its_form_and_guarantees():
    result = invoke("synthesize", *TARGET, "--horizon", "400", "--lambda", "0.05")
    assert result.exit_code == 0, result.output + repr(result.exception)
    expected = synthesize(MonotoneFamily(0.3, Target(50, (0.4, 0.6), (0.46, 0.54))), 0.05, 400)  # L settled 0.01 inside
    lines = result.stdout.splitlines()
    assert lines[0] == f"energy: member α = {expected.alpha:.4f} (k = 2, limit point x_L = 0.46, pivot c = 0.6)"
    assert lines[1].startswith("form: ζ(x) = 0.2286 + ")  # ζ(x_L) = (0.46 − 0.3)/(1 − 0.3)
    assert lines[2] == "p = 0.3, S = [0.4, 0.6], L = [0.45, 0.55], τ = 50"
    for quantity, value in [
        ("violation P(some F_t ∉ S, τ ≤ t ≤ T), T = 400", f"{expected.violation:.6g}"),
        ("tail bound Σ_{t>T} P(F_t ∉ S)", f"{expected.tail:.3g}"),
        ("bound over [τ, ∞) (λ = 0.05)", f"{expected.bound:.6g}"),
        ("expected interference |x* − p|", f"{expected.interference:.6g}"),
    ]:
        assert any(quantity in line and line.rstrip().endswith(value) for line in lines), (quantity, value)
    assert lines[-1].startswith("synthesis took ") and lines[-1].endswith(" bisection steps)")
    assert result.stderr == ""


def test_synthesize_fails_in_one_line_when_no_member_meets_lambda():
    result = invoke("synthesize", *UNREACHABLE)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: " + NONE_MEETS.split(";")[0].format(lam=0.001))
    assert result.stderr.rstrip("\n").endswith("widen S or raise λ") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorized_rule_equals_energy_shield_decide(seed):
    target = Target(20, (0.4, 0.6), (0.45, 0.55))
    for p, alpha in [(0.3, 0.5), (0.8, 0.2), (0.5, 1.0)]:
        energy = MonotoneFamily(p, target)(alpha)
        rng = np.random.default_rng(seed)
        decisions = (rng.random((4, 300)) < p).astype(np.int8)
        draws = rng.random((4, 300))
        vectorized = shield_paths(energy, decisions, draws)
        shield = EnergyShield(energy, target)
        for run in range(4):
            state, outputs = Counts(), []
            for decision, u in zip(decisions[run].tolist(), draws[run].tolist(), strict=True):
                verdict = shield.decide(decision, state, u)
                state = shield.next_state(state, verdict)
                outputs.append(verdict.shielded)
            assert vectorized[run].tolist() == outputs
        assert (vectorized != decisions).any()


def test_simulate_prints_the_summary_and_draws_three_panels(tmp_path):
    result = invoke("simulate", *TARGET, "--horizon", "300", "--runs", "60", "--steps", "800", "--seed", "3", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output + repr(result.exception)
    out = result.stdout
    assert "runs × 800 decisions (seed 3)" in out.replace("\n", " ")
    quantities = (
        "final mean F_800",
        "runs ever violating S at t ≥ 50",
        "mean interference over 800 decisions",
        "expected interference |x* − p|",
    )
    assert all(quantity in out for quantity in quantities)
    final = next(line for line in out.splitlines() if "final mean F_800" in line)
    assert 0.44 < float(final.split()[-1]) < 0.48  # F_t → x_L = 0.46, the settle margin inside L
    inside = next(line for line in out.splitlines() if "runs ending inside L = [0.45, 0.55] (limit point 0.46)" in line)
    assert float(inside.split()[-1]) > 0.5
    expected = next(line for line in out.splitlines() if "expected interference" in line)
    assert expected.split()[-1] == "0.1600"
    assert f"wrote {tmp_path / 'simulation.png'}" in out
    assert imread(tmp_path / "simulation.png").shape[:2] == (900, 1600)


@pytest.fixture(scope="module")
def compas_stream():
    reference_file("compas")
    return compare("compas", decisions=600, seed=0)


def test_compare_tables_and_chart_on_a_small_compas_stream(tmp_path, compas_stream):
    result = invoke("compare", "--datasets", "compas", "--decisions", "600", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output + repr(result.exception)
    lines = result.stdout.splitlines()
    assert any(line.startswith("compas (Caucasian vs African-American), logistic: 600 decisions × 1 run(s), accuracy ") for line in lines)
    header = next(line for line in lines if "shield" in line and "utility loss" in line)
    assert "DP after 200" in header and "DP after 600" in header
    rows = {cells[0]: cells[1:] for cells in (line.replace("│", " ").split() for line in lines) if cells and cells[0] in SHIELDS}
    assert rows == {
        shield: [
            f"{compas_stream.at_third(shield):.4f}",
            f"{compas_stream.at_end(shield):.4f}",
            f"{compas_stream.interventions[shield] / 600:.3f}",
            f"{100 * (compas_stream.correct['unshielded'] - compas_stream.correct[shield]) / 600:.2f}",
            f"{compas_stream.satisfied_periods(shield):.1%}",
            f"{compas_stream.at_end(shield) <= 0.1:.0%}",
        ]
        for shield in SHIELDS
    }
    assert imread(tmp_path / "comparison.png").shape[:2] == (900, 1600)


@needs_data("german")
def test_repetitions_report_mean_and_sd_over_seeds_and_each_classifier(tmp_path):
    """Two runs with gradient-boosted trees: each cell is the mean ± sd (ddof 1) of the runs with seeds 4 and 5."""
    result = invoke("compare", "--datasets", "german", "--classifiers", "boosting", "--decisions", "300", "--repetitions", "2", "--seed", "4", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output + repr(result.exception)
    runs = [compare("german", 300, seed, classifier="boosting") for seed in (4, 5)]
    row = next(line for line in result.stdout.splitlines() if line.split("│")[0].strip() == "energy-adaptive").split("│")
    ends = [run.at_end("energy-adaptive") for run in runs]
    assert row[2].strip() == f"{np.mean(ends):.4f} ± {np.std(ends, ddof=1):.4f}"
    losses = [run.utility_loss("energy-adaptive") for run in runs]
    assert row[3].strip() == f"{np.mean(losses):.3f} ± {np.std(losses, ddof=1):.3f}"
    assert "german (male vs female), boosting: 300 decisions × 2 run(s)" in result.stdout


def test_satisfied_periods_counts_the_period_ends_within_kappa():
    from fairstream.lab.studies.shields import PERIOD, Comparison

    path = np.full(4 * PERIOD, 0.05)
    path[2 * PERIOD - 1] = 0.2  # the second period ends outside κ
    comparison = Comparison("x", ("a", "b"), 4 * PERIOD, 0.5, 0.0, {"energy": path}, {"energy": 20})
    assert comparison.satisfied_periods("energy") == 0.75 and comparison.utility_loss("energy") == 20 / (4 * PERIOD)


def test_energy_and_naive_shields_end_with_a_smaller_gap_than_unshielded_on_compas(compas_stream):
    unshielded = compas_stream.at_end("unshielded")
    assert compas_stream.at_end("energy") < unshielded
    assert compas_stream.at_end("naive") < unshielded
    assert compas_stream.interventions["unshielded"] == 0 < compas_stream.interventions["energy"]


def test_parity_path_is_zero_while_a_group_is_empty():
    decisions = np.array([1, 1, 0, 1])
    first = np.array([True, True, False, False])
    assert parity_path(decisions, first).tolist() == [0.0, 0.0, 1.0, 0.5]


def test_compare_rejects_an_unknown_data_set():
    result = invoke("compare", "--datasets", "compas,credit")
    assert result.exit_code == 2
    assert "unknown data set 'credit'; known: compas, adult, german" in result.stderr


@needs_data("german")
@pytest.mark.parametrize("seed", [1, 2])
def test_on_german_credit_the_adaptive_shield_leaves_a_gap_inside_l_alone(seed):
    """The classifier's gap on the stream is already inside L; told the training half's larger gap, the energy shield
    widens it, while the adaptive one, estimating it from the stream, keeps it where it was."""
    comparison = compare("german", 3000, seed)
    unshielded = comparison.at_end("unshielded")
    assert unshielded < 0.04 < comparison.raw_gap
    assert comparison.at_end("energy") > unshielded + 0.01
    assert abs(comparison.at_end("energy-adaptive") - unshielded) < 0.005


@needs_data("compas", "adult")
def test_table_1_sets_the_energy_shield_beside_static_fair_and_dynamic(monkeypatch, tmp_path):
    """Table 1's columns per data set and classifier: the energy shield ends fairer than Dynamic, which stays near κ."""
    from fairstream.lab.cli import shield_experiments

    monkeypatch.setattr(shield_experiments, "TABLE_1_REPETITIONS", 1)
    monkeypatch.setattr(shield_experiments, "TABLE_1_DECISIONS", 300)
    result = invoke("experiments", "--runs", "10", "--steps", "200", "--group-runs", "2", "--table-1", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output + repr(result.exception)
    rows = {tuple(cell.strip() for cell in line.split("│")[:2]): line.split("│")[2:] for line in result.stdout.splitlines() if line.count("│") == 4}
    for data in ("compas, logistic", "adult, boosting"):
        end = {shield: float(rows[(data, shield)][1].split("±")[0]) for shield in ("unshielded", "energy", "static-fair", "dynamic")}
        assert end["energy"] < end["dynamic"] <= 0.1 < end["unshielded"], (data, end)


@needs_data("compas")
def test_compare_equal_opportunity_keeps_the_tpr_gap_of_the_labelled_ones(tmp_path):
    """The TPR gap recomputed by pandas from the stream's labels: every FinHzn-based shield ends its periods with it ≤ κ."""
    result = invoke("compare", "--fairness", "equal_opportunity", "--datasets", "compas", "--decisions", "200", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "EO = |TPR_a − TPR_b| over the individuals labelled 1" in result.stdout
    comparison = compare("compas", 200, 0, fairness="equal_opportunity")
    from fairstream.lab.studies.shields import dataset, recommend

    recommendations = recommend(dataset("compas"), 0)
    picks = np.random.default_rng(0).integers(0, len(recommendations.test_decisions), size=200)
    frame = pd.DataFrame({"group": recommendations.test_groups[picks], "decision": recommendations.test_decisions[picks], "label": recommendations.test_labels[picks]})
    tpr = frame[frame.label == 1].groupby("group").decision.mean()
    assert comparison.at_end("unshielded") == pytest.approx(abs(tpr["Caucasian"] - tpr["African-American"]), abs=1e-12)
    for shield in ("static-fair", "static-bw", "dynamic"):
        assert comparison.satisfied_periods(shield) == 1.0, shield
    assert comparison.interventions["static-fair"] > comparison.interventions["dynamic"]
    assert comparison.correct["unshielded"] / 200 == pytest.approx(accuracy_score(frame.label, frame.decision))
    for shield in SHIELDS:  # a flip changes whether one decision is right: accuracy moves by at most the flips
        assert abs(comparison.accuracy_loss(shield)) <= 100 * comparison.utility_loss(shield) + 1e-9, shield
