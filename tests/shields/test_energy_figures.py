"""The energy-shield paper's Fig. 1 and Fig. 3 from `fairstream shield experiments`: where each shield leaves F_t,
what the horizon buys, and the command's tables and figures."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from matplotlib.image import imread

from fairstream.cli import cli
from fairstream.shields import MonotoneFamily, synthesize
from fairstream.shields.drift import fixpoint
from fairstream.studies.energy_figures import LAMBDA, MARGIN, TARGET, energies, figure_1, figure_2, figure_3


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
    for name in ("energy_fig1.png", "energy_fig2.png", "energy_fig3.png"):
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
