"""Two-group synthesis: the vectorized streams against `GroupShield.decide` draw for draw and against the exact
programme, the exact bisection against the exact measures, and the synthesized bound against independent streams
through the runtime shield."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.compiler.load import load_plan
from fairstream.language.models import ShieldSpec
from fairstream.shields import GroupShield, MonotoneEnergy, ShieldError, Target
from fairstream.shields.energy import group_simulation
from fairstream.shields.energy.group_simulation import GroupDraws, GroupProblem, group_runs
from fairstream.shields.energy.group_synthesis import member, synthesize_groups
from fairstream.shields.energy.group_violations import group_violations
from fairstream.shields.runtime.configured import configure
from tests.conftest import SPECS


def decided_streams(shield: GroupShield, problem: GroupProblem, runs: int, horizon: int, seed: int) -> dict[str, np.ndarray]:
    """The runtime shield's own `decide`, stream by stream, on the draws `group_runs` makes: (3, runs) per decision.
    With `problem.delay`, it decides by the counts of all decisions but the last `delay` (their outcomes still to come),
    as the equal-opportunity shield does with late labels; violations are of the counts of all decisions."""
    rng = np.random.default_rng(seed)
    draws = np.stack([rng.random((3, runs)) for _ in range(horizon)])  # (horizon, 3, runs)
    first_violation, violations, flips, final = (np.zeros(runs) for _ in range(4))
    for run in range(runs):
        state, known, waiting = shield.start(), shield.start(), []
        for t in range(horizon):
            arrival, raw_draw, u = draws[t, :, run]
            group = "a" if arrival < problem.share else "b"
            raw = int(raw_draw < (problem.p_a if group == "a" else problem.p_b))
            verdict = shield.decide(raw, known, float(u), group)
            state = shield.next_state(state, verdict)
            waiting.append(verdict)
            if len(waiting) > problem.delay:
                known = shield.next_state(known, waiting.pop(0))
            flips[run] += verdict.flipped
            if t + 1 >= shield.target.burn_in and shield.target.outside(state.gap):
                violations[run] += 1
                first_violation[run] = first_violation[run] or t + 1
        final[run] = state.gap
    return {"first_violation": first_violation, "violations": violations, "flips": flips, "final_gap": final}


@pytest.fixture(params=["compiled", "numpy"])
def stepped(request, monkeypatch) -> str:
    """Streams stepped by the C kernel, or by numpy as where no compiler built it."""
    if request.param == "numpy":
        monkeypatch.setattr(group_simulation, "group_kernel", None)
    elif group_simulation.group_kernel is None:
        pytest.skip("the C kernel is not built here")
    return request.param


@pytest.mark.parametrize("delay", [0, 7], ids=["outcomes known", "outcomes 7 decisions late"])
@pytest.mark.parametrize("rates", [(0.65, 0.35), (0.35, 0.65), (0.51, 0.5)], ids=["push down", "push up", "inside L"])
def test_the_simulated_streams_are_the_runtime_shields_draw_for_draw(stepped, rates, delay):
    target = Target(30, (-0.12, 0.12), (-0.05, 0.05))
    problem = GroupProblem(*rates, 0.45, target, delay)
    energy = MonotoneEnergy(problem.raw_gap, target.settled(0.01), 0.3, domain=(-1.0, 1.0))
    streams = group_runs(energy, problem, runs=40, horizon=300, seed=5)  # past a block of draws
    expected = decided_streams(GroupShield(energy, target, placement=problem.placement), problem, runs=40, horizon=300, seed=5)
    assert streams.flips.any() and (streams.violated.any() or rates == (0.51, 0.5))
    for name, values in expected.items():
        np.testing.assert_allclose(getattr(streams, name), values, err_msg=name)


@pytest.mark.parametrize("share", [0.5, 0.15, 0.8], ids=["even", "first smaller", "second smaller"])
@pytest.mark.parametrize("delay", [0, 12])
@pytest.mark.parametrize("alpha", [0.0, 0.37, 1.0])
def test_the_kernel_and_numpy_take_the_same_decisions_and_held_draws_are_the_drawn_ones(monkeypatch, alpha, delay, share):
    if group_simulation.group_kernel is None:
        pytest.skip("the C kernel is not built here")
    problem = GroupProblem(0.6, 0.3, share, Target(50, (-0.1, 0.1), (-0.05, 0.05)), delay)
    energy = member(problem, alpha, 0.01)
    held = GroupDraws(problem, 500, 700, 3).hold()
    compiled = group_runs(energy, problem, 500, 700, 3, held)
    monkeypatch.setattr(group_simulation, "group_kernel", None)
    plain = group_runs(energy, problem, 500, 700, 3)
    for name in ("first_violation", "violations", "flips", "final_gap"):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(plain, name), err_msg=name)


def test_the_vectorized_streams_match_the_exact_programme():
    target = Target(15, (-0.2, 0.2), (-0.1, 0.1))
    problem = GroupProblem(0.7, 0.45, 0.6, target)
    energy = MonotoneEnergy(problem.raw_gap, target.settled(0.01), 0.4, domain=(-1.0, 1.0))
    exact = group_violations(energy, problem.p_a, problem.p_b, problem.share, target, 40)
    streams = group_runs(energy, problem, runs=40_000, horizon=40, seed=2)
    error = math.sqrt(exact.probability * (1 - exact.probability) / 40_000)
    assert abs(streams.violated.mean() - exact.probability) < 4 * error
    assert streams.violations.mean() == pytest.approx(exact.expected, rel=0.05)
    assert streams.flips.mean() / 40 == pytest.approx(exact.interference, rel=0.02)


def test_exact_synthesis_is_the_least_member_within_tolerance():
    target = Target(20, (-0.2, 0.2), (-0.1, 0.1))
    problem = GroupProblem(0.7, 0.4, 0.4, target)
    result = synthesize_groups(problem, lam=0.3, horizon=60, tol=0.05)
    assert result.method == "exact" and result.confidence is None

    def probability(alpha: float) -> float:
        energy = MonotoneEnergy(problem.raw_gap, target.settled(0.01), alpha, domain=(-1.0, 1.0))
        return group_violations(energy, problem.p_a, problem.p_b, problem.share, target, 60).probability

    assert probability(result.alpha) == pytest.approx(result.bound) and result.bound <= 0.3
    assert probability(result.alpha - 0.05) > 0.3


def test_the_synthesized_bound_holds_on_independent_streams_through_the_runtime_shield():
    target = Target(60, (-0.15, 0.15), (-0.06, 0.06))
    problem = GroupProblem(0.55, 0.25, 0.35, target)
    result = synthesize_groups(problem, lam=0.1, horizon=400, runs=2000, tol=0.05)
    assert result.method == "monte carlo" and result.bound <= 0.1
    shield = GroupShield(member(problem, result.alpha, 0.01), target, placement=problem.placement)
    checked = decided_streams(shield, problem, runs=2000, horizon=400, seed=1234)
    rate = float((checked["first_violation"] > 0).mean())
    assert 0 < rate <= result.bound + 2 * math.sqrt(result.bound * (1 - result.bound) / 2000)
    gentler = group_runs(member(problem, max(result.alpha - 0.3, 0.0), 0.01), problem, 2000, 400, seed=99)
    assert gentler.violated.mean() > rate  # a gentler member would not have met the bound: the choice is not trivially steep


def test_the_shipped_spec_leaves_s_no_more_often_than_its_lambda():
    shield_spec = load_plan(SPECS / "hiring_energy_shield.yaml").spec.shield
    configured = configure(shield_spec)
    assert configured.assessment.probability_bound <= shield_spec.max_violation
    problem = GroupProblem(*shield_spec.rates, shield_spec.share, configured.shield.target)
    streams = group_runs(configured.shield.energy, problem, runs=2000, horizon=shield_spec.horizon, seed=(7, 7))
    rate = float(streams.violated.mean())
    assert rate <= shield_spec.max_violation + 2 * math.sqrt(shield_spec.max_violation * (1 - shield_spec.max_violation) / 2000)
    assert "synthesized for λ = 0.05" in configured.summary(shield_spec)


def test_no_member_meeting_lambda_is_one_clear_error():
    problem = GroupProblem(0.6, 0.3, 0.5, Target(10, (-0.05, 0.05), (-0.02, 0.02)))
    with pytest.raises(ShieldError, match="no member of the family meets λ = 0.01 over"):
        synthesize_groups(problem, lam=0.01, horizon=400, runs=500)


def test_a_spec_describes_the_raw_gap_once():
    base = {"decisions": "D", "group": "g", "decision": "y", "groups": ["a", "b"]}
    with pytest.raises(ValueError, match="give rates or raw_gap, not both"):
        ShieldSpec.model_validate({**base, "rates": [0.6, 0.3], "raw_gap": 0.3})
    with pytest.raises(ValueError, match="raw_gap alone needs a steepness"):
        ShieldSpec.model_validate({**base, "raw_gap": 0.3})
    by_hand = ShieldSpec.model_validate({**base, "rates": [0.6, 0.3], "steepness": 0.2, "burn_in": 50, "horizon": 80})
    configured = configure(by_hand)
    assert configured.alpha == 0.2 and configured.method == "exact"
    assert "set by hand in the spec" in configured.summary(by_hand) and "(exact; λ = 0.05)" in configured.summary(by_hand)


def _cli(*args: str):
    return CliRunner().invoke(cli, ["shield", *args], env={"NO_COLOR": "1", "COLUMNS": "200"})


def test_synthesize_two_groups_from_the_cli():
    result = _cli("synthesize", "--groups", "2", "--rates", "0.7,0.4", "--share", "0.4", "--running=-0.2,0.2", "--limit=-0.1,0.1",
                  "--burn-in", "20", "--horizon", "60", "--lambda", "0.3")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "synthesized for λ = 0.3" in result.output and "exact: dynamic programming" in result.output
    missing = _cli("synthesize", "--groups", "2")
    assert missing.exit_code == 2 and "give --rates P_A,P_B" in missing.output
