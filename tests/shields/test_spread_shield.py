"""Demographic parity over three groups: the spread shield's simulated streams are the runtime shield's decision for
decision, its synthesized bound holds on independent streams through the runtime shield, and the shipped spec keeps
the spread in S on the decision path; specs that cannot have such a shield say why."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairstream.compiler.load import load_plan
from fairstream.connectors.files import RecordSource
from fairstream.dataflow.shield_flow import build_shield_flow
from fairstream.engine.api import run_main
from fairstream.language.models import ShieldSpec
from fairstream.records.envelope import INTERVENTION, SHIELDED
from fairstream.shields import Target
from fairstream.shields.energy.spread import SpreadEnergy, SpreadProblem, SpreadShield, spread_runs, synthesize_spread
from fairstream.shields.runtime.configured import configure
from fairstream.shields.runtime.decisions import SHIELD_FIELD
from tests.conftest import SPECS
from tests.list_sink import ListSink
from tests.streams import group_decisions

GROUPS = ("north", "south", "east")


def first_violations(shield: SpreadShield, problem: SpreadProblem, runs: int, horizon: int, seed: int) -> np.ndarray:
    """The runtime shield's own `decide`, stream by stream, on the draws `spread_runs` makes: (3, runs) per decision;
    the first t ≥ τ at which the spread of the shielded rates exceeds S's upper end, counted plainly."""
    rng = np.random.default_rng(seed)
    draws = np.stack([rng.random((3, runs)) for _ in range(horizon)])
    bounds = np.cumsum(problem.shares)
    out = np.zeros(runs, dtype=np.int64)
    for run in range(runs):
        state = shield.start()
        accepted = {name: [0, 0] for name in shield.groups}
        for t in range(horizon):
            arrival, raw_draw, u = draws[t, :, run]
            index = int(np.searchsorted(bounds[:-1], arrival, side="right"))
            verdict = shield.decide(int(raw_draw < problem.rates[index]), state, float(u), shield.groups[index])
            state = shield.next_state(state, verdict)
            accepted[shield.groups[index]][0] += 1
            accepted[shield.groups[index]][1] += verdict.shielded
            rates = [ones / seen for seen, ones in accepted.values() if seen]
            spread = max(rates) - min(rates) if len(rates) > 1 else 0.0
            if t + 1 >= problem.target.burn_in and spread > problem.target.running[1] and not out[run]:
                out[run] = t + 1
    return out


@pytest.mark.parametrize("alpha", [0.0, 0.4, 1.0])
def test_the_simulated_streams_are_the_runtime_shields_draw_for_draw(alpha):
    problem = SpreadProblem((0.62, 0.4, 0.33), (0.5, 0.3, 0.2), Target(30, (0.0, 0.15), (0.0, 0.1)))
    energy = SpreadEnergy(alpha, 0.15)
    simulated = spread_runs(energy, problem, 60, 300, seed=8)
    assert np.array_equal(simulated, first_violations(SpreadShield(energy, problem.target, GROUPS, problem.rates, problem.shares), problem, 60, 300, seed=8))
    assert simulated.any()


def test_the_synthesized_bound_holds_on_independent_streams_through_the_runtime_shield():
    problem = SpreadProblem((0.6, 0.42, 0.3), (0.4, 0.35, 0.25), Target(60, (0.0, 0.16), (0.0, 0.1)))
    result = synthesize_spread(problem, lam=0.1, horizon=300, runs=1500, tol=0.05)
    assert result.bound <= 0.1 and 0 < result.alpha < 1
    runs = 800
    checked = first_violations(SpreadShield(result.energy, problem.target, GROUPS, problem.rates, problem.shares), problem, runs, 300, seed=4321)
    rate = float((checked > 0).mean())
    assert 0 < rate <= result.bound + 2 * math.sqrt(result.bound * (1 - result.bound) / runs)
    gentler = spread_runs(SpreadEnergy(max(result.alpha - 0.3, 0.0), 0.16), problem, 1500, 300, seed=99)
    assert (gentler > 0).mean() > rate  # a gentler member would not have met the bound


def test_the_shipped_three_group_shield_keeps_the_spread_in_s_on_the_decision_path():
    plan = load_plan(SPECS / "lending_three_groups_shield.yaml")
    configured = configure(plan.spec.shield)  # type: ignore[arg-type]
    assert configured.assessment.probability_bound <= 0.05 and "spread of the 3 groups' rates" in configured.summary(plan.spec.shield)  # type: ignore[arg-type]
    events = group_decisions(4000, {"north": 0.6, "south": 0.45, "east": 0.3}, seed=6, shares={"north": 0.4, "south": 0.35, "east": 0.25})
    out: list = []
    run_main(build_shield_flow(plan, RecordSource(lambda: [dict(e) for e in events]), ListSink(out)))
    shielded = [r["record"] for r in out if r["type"] == SHIELDED]
    assert [r["id"] for r in shielded] == [e["id"] for e in events]

    def spread(records):
        rates = [np.mean([r["approved"] for r in records if r["group"] == g]) for g in GROUPS]
        return max(rates) - min(rates)

    assert spread(events) > 0.25 and spread(shielded) <= 0.15
    interventions = [r for r in out if r["type"] == INTERVENTION]
    assert len(interventions) > 100 and interventions[0]["member"]["family"] == "spread" and interventions[0]["groups"] == list(GROUPS)
    assert {r["id"] for r in shielded if r[SHIELD_FIELD]["flipped"]} == {r["decision_id"] for r in interventions}
    status = [r for r in out if r["type"] == "shield.status"][-1]
    assert set(status["groups"]) == set(GROUPS) and status["fairness"] == pytest.approx(spread(shielded[: status["decisions"]]), abs=1e-12)


BASE = {"decisions": "D", "group": "g", "decision": "y", "groups": ["a", "b", "c"], "rates": [0.6, 0.4, 0.3], "running": [0, 0.15], "limit": [0, 0.1]}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"rates": None}, "needs rates"),
        ({"rates": [0.6, 0.4]}, "one rate per group"),
        ({"running": [-0.1, 0.1], "limit": [-0.05, 0.05]}, "start at 0"),
        ({"shares": [0.5, 0.5]}, "one per group, summing to 1"),
        ({"groups": ["a", "b", "a"]}, "distinct"),
        ({"groups": ["a", "b"], "rates": [0.6, 0.3], "shares": [0.5, 0.5], "running": [-0.1, 0.1], "limit": [-0.05, 0.05]}, "shares is for three or more"),
    ],
)
def test_a_spec_that_cannot_have_the_shield_says_why(changes, message):
    with pytest.raises(ValueError, match=message):
        ShieldSpec.model_validate({**BASE, **changes})


def test_synthesize_with_a_three_group_spec_says_where_its_shield_is_synthesized():
    from click.testing import CliRunner

    from fairstream.cli import cli

    result = CliRunner().invoke(cli, ["shield", "synthesize", "--spec", "lending_three_groups_shield"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 2 and "has 3 groups" in result.output and "shield run" in result.output
