"""The adaptive shield states a bound without the rates: its simulated streams are the runtime shield's decision for
decision (estimates included, through a jump of the rates), the bound it states for `rates_within` holds on
independent streams through the runtime shield — the rates 0.6/0.3 jumping to 0.9/0.2 halfway, and rates off the
grid — and λ it cannot keep is refused at start with what it keeps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.language.models import ShieldSpec
from fairstream.shields import Target
from fairstream.shields.energy.adaptive_bound import DecisionMakers, adaptive_runs
from fairstream.shields.energy.shields import AdaptiveGroupShield
from fairstream.shields.errors import ShieldError
from fairstream.shields.runtime.configured import configure

TARGET = Target(100, (-0.1, 0.1), (-0.05, 0.05))


def runtime_first_violations(shield: AdaptiveGroupShield, share: float, rates: list[tuple[float, float, float, float]], runs: int, horizon: int, seed: int) -> np.ndarray:
    """The runtime shield's `decide` and `next_state`, stream by stream, on the draws `adaptive_runs` makes (3 per stream
    and decision, every decision maker's streams side by side); the first t ≥ τ with the gap outside S."""
    rng = np.random.default_rng(seed)
    draws = np.stack([rng.random((3, runs * len(rates))) for _ in range(horizon)])
    out = np.zeros(runs * len(rates), dtype=np.int64)
    for column in range(runs * len(rates)):
        before_a, before_b, after_a, after_b = rates[column // runs]
        state = shield.start()
        for t in range(1, horizon + 1):
            arrival, raw_draw, u = draws[t - 1, :, column]
            group = "a" if arrival < share else "b"
            p_a, p_b = (before_a, before_b) if t <= horizon // 2 else (after_a, after_b)
            verdict = shield.decide(int(raw_draw < (p_a if group == "a" else p_b)), state, float(u), group)
            state = shield.next_state(state, verdict)
            if t >= shield.target.burn_in and shield.target.outside(state.counts.gap) and not out[column]:
                out[column] = t
    return out.reshape(len(rates), runs)


def test_the_simulated_streams_are_the_runtime_shields_draw_for_draw():
    makers = DecisionMakers(((0.6, 0.9), (0.2, 0.3)), 0.45, Target(30, (-0.1, 0.1), (-0.05, 0.05)))
    chosen = [0, len(makers.members()) - 1]  # a constant decision maker and one that jumps between corners halfway
    simulated = adaptive_runs(0.4, makers, 25, 400, seed=3)
    shield = AdaptiveGroupShield(makers.target, 0.4)
    expected = runtime_first_violations(shield, 0.45, makers.members(), 25, 400, seed=3)
    assert np.array_equal(simulated[chosen], expected[chosen]) and simulated[chosen].any()


SPEC = {
    "decisions": "D", "group": "g", "decision": "y", "groups": ["a", "b"], "burn_in": 100, "running": [-0.1, 0.1],
    "limit": [-0.05, 0.05], "rates_within": [[0.6, 0.9], [0.2, 0.3]], "max_violation": 0.1, "horizon": 1000,
}  # fmt: skip


@pytest.mark.parametrize("rates", [(0.6, 0.3, 0.9, 0.2), (0.7, 0.25, 0.7, 0.25)], ids=["0.6/0.3 then 0.9/0.2 halfway", "0.7/0.25 off the grid"])
def test_the_stated_bound_holds_on_independent_streams_through_the_runtime_shield(rates):
    spec = ShieldSpec.model_validate(SPEC)
    configured = configure(spec)
    bound = configured.assessment.probability_bound
    assert bound <= 0.1 and "bounded for rates within [[0.6, 0.9], [0.2, 0.3]]" in configured.summary(spec) and "≤ " in configured.summary(spec)
    runs = 300
    left = runtime_first_violations(configured.shield, spec.share, [rates], runs, spec.horizon, seed=77)
    rate = float((left > 0).mean())
    assert rate + 1.96 * math.sqrt(max(rate * (1 - rate), 1e-4) / runs) <= bound, (rate, bound)


def test_a_lambda_it_cannot_keep_is_refused_with_what_it_keeps(tmp_path):
    with pytest.raises(ShieldError, match=r"cannot keep λ = 0.01 .* its member α = 1 keeps 0\.\d+, worst for rates .*set max_violation to at least"):
        configure(ShieldSpec.model_validate({**SPEC, "max_violation": 0.01}))
    with pytest.raises(ShieldError, match=r"give rates_within: \[\[low, high\], \[low, high\]\]"):
        configure(ShieldSpec.model_validate({key: value for key, value in SPEC.items() if key != "rates_within"}))


def test_the_shield_command_refuses_lambda_in_one_line(tmp_path):
    import yaml

    from fairstream.connectors.files import write_jsonl
    from fairstream.connectors.synthetic.hiring import hiring_decisions
    from fairstream.language.yaml_file import read_yaml
    from tests.conftest import SPECS

    spec = read_yaml(SPECS / "hiring_energy_shield.yaml")
    del spec["shield"]["rates"]
    spec["shield"] |= {"rates_within": [[0.5, 0.7], [0.2, 0.4]], "max_violation": 0.001, "horizon": 500}
    (tmp_path / "shield.yaml").write_text(yaml.safe_dump(spec))
    write_jsonl(tmp_path / "decisions.jsonl", hiring_decisions(20, p_male=0.6, p_female=0.3, seed=1))
    args = ["shield", "run", str(tmp_path / "shield.yaml"), "--input", str(tmp_path / "decisions.jsonl"), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli, args, env={"NO_COLOR": "1", "COLUMNS": "400"})
    assert result.exit_code != 0 and "cannot keep λ = 0.001" in result.output and len(result.output.strip().splitlines()) == 1
