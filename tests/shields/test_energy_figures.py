"""The energy-shield paper's Fig. 1 and Fig. 3 from `fairstream shield experiments`: where each shield leaves F_t,
what the horizon buys, and the command's tables and figures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner
from matplotlib.image import imread

from fairstream.cli import cli
from fairstream.lab.periodic import NaiveShield
from fairstream.lab.periodic.stream_periodic import StreamPeriodicShield, period_values
from fairstream.lab.studies.energy_figures import (
    LAMBDA,
    MARGIN,
    PERIOD,
    TARGET,
    energies,
    figure_1,
    figure_2,
    figure_3,
    figure_4,
    naive_paths,
    periodic_paths,
)
from fairstream.shields import MonotoneFamily, synthesize
from fairstream.shields.energy.drift import fixpoint


@pytest.mark.parametrize(("p", "point"), [(0.3, 0.45 + MARGIN), (0.7, 0.55 - MARGIN), (0.5, 0.5)])
def test_every_energy_function_has_its_limit_point_in_l(p, point):
    for name, energy in energies(p).items():
        if name in ("idle", "deterministic"):
            continue
        assert fixpoint(energy, p) == pytest.approx(point, abs=1e-9), name


@pytest.fixture(scope="module")
def paths():
    return figure_1(runs=80, steps=3000, seed=4)


def test_energy_shields_bring_a_biased_maker_to_l_and_the_baselines_do_not(paths):
    biased = paths["biased"]
    for name in ("polynomial", "exponential", "monotone (λ = 0.05)"):
        assert biased[name].final == pytest.approx(0.46, abs=0.01) and biased[name].inside_limit > 0.8, name
    assert biased["idle"].final == pytest.approx(0.3, abs=0.01) and biased["idle"].interference == 0
    assert biased["deterministic"].final == pytest.approx(0.4, abs=0.005)  # it hugs the edge of S
    assert biased["monotone (λ = 0.05)"].violated < biased["polynomial"].violated
    assert all(path.final == pytest.approx(0.5, abs=0.01) for path in paths["fair"].values())


def test_the_horizon_buys_precision_and_the_synthesized_bound_is_reached():
    rows = figure_3(horizons=(200, 500, 1000, 2000))
    assert [r.violation for r in rows] == sorted(r.violation for r in rows)
    assert [r.tail for r in rows] == sorted((r.tail for r in rows), reverse=True) and rows[-1].tail < 1e-12
    chosen = synthesize(MonotoneFamily(0.3, TARGET.settled(MARGIN)), LAMBDA, 1000)
    assert rows[2].violation + rows[2].tail == pytest.approx(chosen.bound, rel=1e-12) and chosen.bound <= LAMBDA


def test_shield_experiments_prints_both_figures_tables_and_writes_them(tmp_path):
    args = ["shield", "experiments", "--runs", "20", "--steps", "500", "--group-runs", "3", "--out", str(tmp_path)]
    result = CliRunner().invoke(cli, args, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Fig. 1, fair decision maker" in result.stdout and "Fig. 1, biased decision maker" in result.stdout and "Fig. 3" in result.stdout
    assert "Fig. 2, two groups, constant gap 0.3" in result.stdout and "Fig. 2, two groups, sine" in result.stdout
    assert "Fig. 4, biased decision maker" in result.stdout and "periodic (50), tuned to L" in result.stdout
    for name in ("energy_fig1.png", "energy_fig2.png", "energy_fig3.png", "energy_fig4.png"):
        assert imread(tmp_path / name).shape[:2] == (900, 1600)


def test_two_groups_settle_where_the_member_for_their_gap_sends_them_and_the_adaptive_one_follows_a_sine():
    """Constant gap 0.3: both shields end near L's upper end moved 0.01 inside (0.04). Along the sine the fixed shield,
    told the mean gap, lags above the adaptive one while the gap is high (t ≈ 500–1,000)."""
    results = figure_2(runs=12, steps=1500, seed=3)
    constant = results["constant gap 0.3"]
    for paths in constant.values():
        assert paths.final == pytest.approx(0.04, abs=0.012)
    sine = results["sine: p_a = 0.6 + 0.15·sin(2πt/2,000)"]
    fixed, adaptive = sine["told the gap 0.3"].band[1], sine["adaptive"].band[1]
    assert fixed[600:1000].mean() > adaptive[600:1000].mean()


def _decided(shield, decisions: np.ndarray) -> np.ndarray:
    """A one-stream shield's own `decide`, run by run."""
    out = np.empty_like(decisions)
    for run, row in enumerate(decisions):
        state = shield.start()
        for t, raw in enumerate(row):
            verdict = shield.decide(int(raw), state, 0.5)
            state = shield.next_state(state, verdict)
            out[run, t] = verdict.shielded
    return out


def test_the_vectorized_baselines_of_fig_4_are_the_shields_own_decisions():
    decisions = (np.random.default_rng(8).random((6, 230)) < 0.3).astype(np.int8)
    np.testing.assert_array_equal(naive_paths(TARGET.running, decisions), _decided(NaiveShield(TARGET.running), decisions))
    for interval in (TARGET.running, TARGET.limit):
        periodic = StreamPeriodicShield(0.3, PERIOD, interval)
        np.testing.assert_array_equal(periodic_paths(0.3, interval, decisions), _decided(periodic, decisions))


def _least_flips(p: float, period: int, interval: tuple[float, float], history: tuple[int, ...] = ()) -> float:
    """The least expected number of flips that ends the period inside the interval, by recursion over whole sequences of
    shielded decisions (no counters): ∞ when some raw sequence leaves no way."""
    if len(history) == period:
        return 0.0 if interval[0] - 1e-12 <= sum(history) / period <= interval[1] + 1e-12 else math.inf
    value = 0.0
    for raw, chance in ((1, p), (0, 1 - p)):
        value += chance * min(_least_flips(p, period, interval, (*history, raw)), 1 + _least_flips(p, period, interval, (*history, 1 - raw)))
    return value


@pytest.mark.parametrize(("p", "interval"), [(0.3, (0.5, 0.75)), (0.8, (0.25, 0.5)), (0.5, (0.4, 0.6))])
def test_the_periodic_tables_give_the_least_expected_flips_of_every_policy(p, interval):
    table = period_values(p, 8, interval, np.array([0]), np.array([0]))
    expected = _least_flips(p, 8, interval)
    assert table[0, 0, 0] == pytest.approx(expected, rel=1e-12) if math.isfinite(expected) else math.isinf(table[0, 0, 0])


def test_fig_4_tuned_baselines_hug_their_interval_and_the_periodic_one_holds_it_at_period_ends():
    results = figure_4(runs=40, steps=2000, seed=2)
    assert results["naive, tuned to S"].final == pytest.approx(0.40, abs=0.002) and results["naive, tuned to S"].violated == 0
    assert results["naive, tuned to L"].final == pytest.approx(0.45, abs=0.002)
    assert results["periodic (50), tuned to L"].final == pytest.approx(0.45, abs=0.002)
    assert results["periodic (50), tuned to S"].violated == 1.0  # held only at period ends: between them F drifts below S
    energy = results["energy (λ = 0.05)"]
    assert energy.inside_limit > 0.8 and energy.interference == pytest.approx(0.16, abs=0.005)
    decisions = (np.random.default_rng(1).random((20, 1000)) < 0.3).astype(np.int8)
    shares = np.cumsum(periodic_paths(0.3, TARGET.running, decisions), axis=1)[:, PERIOD - 1 :: PERIOD] / np.arange(PERIOD, 1001, PERIOD)
    assert ((shares >= 0.4 - 1e-12) & (shares <= 0.6 + 1e-12)).all()
