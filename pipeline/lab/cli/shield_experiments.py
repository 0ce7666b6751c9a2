"""`fairstream shield experiments`: the energy-shield paper's Figs. 1–4, as tables and PNGs."""

from __future__ import annotations

import time
from pathlib import Path

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.figures.energy_figures import write_figure_1, write_figure_2, write_figure_3, write_figure_4
from fairstream.lab.studies.energy_figures import (
    DECISION_MAKERS,
    GROUP_HORIZON,
    GROUP_TARGET,
    LAMBDA,
    TARGET,
    figure_1,
    figure_2,
    figure_3,
    figure_4,
    group_alpha,
)


@click.command(name="experiments")
@click.option("--runs", default=500, show_default=True, type=click.IntRange(10), help="Simulated runs per decision maker and shield.")
@click.option("--steps", default=5000, show_default=True, type=click.IntRange(100), help="Decisions per run.")
@click.option("--group-runs", default=100, show_default=True, type=click.IntRange(2), help="Runs per scenario and shield of the two-group Fig. 2 (each decision through the shield's own decide).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the raw decisions and the flip draws.")
@click.option("--table-1", "table_1", is_flag=True, help="Also the Table-1-style comparison on COMPAS, Adult and German Credit (needs fairstream[lab]).")
@click.option("--out", "out_dir", default="out/shields", show_default=True, type=click.Path(file_okay=False), help="Directory for energy_fig1.png … energy_fig4.png.")
@reports_errors
def experiments(runs: int, steps: int, group_runs: int, seed: int, table_1: bool, out_dir: str) -> None:
    """Fig. 1: polynomial, exponential and synthesized energy functions against the idle and the deterministic shield on
    a fair and a biased decision maker; Fig. 2: two groups, the raw gap told, estimated online, and changing along a
    sine; Fig. 3: the exact programme's horizon against the tail bound and time; Fig. 4: the energy shield against the
    naive and the periodic shield, each tuned once to S and once to L; with --table-1, the energy shield against the
    fairness-shield paper's Static-Fair and Dynamic on classifier-recommended streams (Table 1)."""
    started = time.perf_counter()
    results = figure_1(runs, steps, seed)
    groups = figure_2(group_runs, min(steps, 4000), seed)
    rows = figure_3()
    baselines = figure_4(runs, steps, seed)
    (s_lo, s_hi), (l_lo, l_hi) = TARGET.running, TARGET.limit
    for maker, shields in results.items():
        console.table(
            f"Fig. 1, {maker} decision maker (p = {DECISION_MAKERS[maker]:g}; S = [{s_lo:g}, {s_hi:g}], L = [{l_lo:g}, {l_hi:g}], τ = {TARGET.burn_in}): {runs} runs × {steps} decisions",
            ["shield", "runs leaving S after τ", "runs ending in L", f"mean F_{steps}", "share flipped"],
            [(name, f"{p.violated:.1%}", f"{p.inside_limit:.1%}", f"{p.final:.4f}", f"{p.interference:.4f}") for name, p in shields.items()],
            right=(1, 2, 3, 4),
        )
    (g_lo, g_hi), (m_lo, m_hi) = GROUP_TARGET.running, GROUP_TARGET.limit
    for scenario, shields in groups.items():
        console.table(
            f"Fig. 2, two groups, {scenario} (S = [{g_lo:g}, {g_hi:g}], L = [{m_lo:g}, {m_hi:g}], τ = {GROUP_TARGET.burn_in}, α = {group_alpha():.4f} synthesized for λ = {LAMBDA:g} over [τ, {GROUP_HORIZON:,}]): {group_runs} runs × {min(steps, 4000)} decisions",
            ["shield", "runs leaving S after τ", "runs ending in L", "mean final D", "share flipped"],
            [(name, f"{p.violated:.1%}", f"{p.inside_limit:.1%}", f"{p.final:+.4f}", f"{p.interference:.4f}") for name, p in shields.items()],
            right=(1, 2, 3, 4),
        )
    console.table(
        "Fig. 3, the monotone member for p = 0.3 (λ = 0.05): horizon T of the exact programme",
        ["T", "P(some F_t ∉ S, τ ≤ t ≤ T)", "tail bound beyond T", "bound over [τ, ∞)", "seconds"],
        [(f"{r.horizon:,}", f"{r.violation:.6f}", f"{r.tail:.3g}", f"{r.violation + r.tail:.6g}", f"{r.seconds:.3f}") for r in rows],
        right=(1, 2, 3, 4),
    )
    console.table(
        f"Fig. 4, biased decision maker (p = 0.3; S = [{s_lo:g}, {s_hi:g}], L = [{l_lo:g}, {l_hi:g}], τ = {TARGET.burn_in}): {runs} runs × {steps} decisions",
        ["shield", "runs leaving S after τ", "runs ending in L", f"mean F_{steps}", "share flipped"],
        [(name, f"{p.violated:.1%}", f"{p.inside_limit:.1%}", f"{p.final:.4f}", f"{p.interference:.4f}") for name, p in baselines.items()],
        right=(1, 2, 3, 4),
    )
    if table_1:
        print_table_1(seed)
    out = Path(out_dir)
    written = [
        write_figure_1(results, out / "energy_fig1.png"),
        write_figure_2(groups, out / "energy_fig2.png"),
        write_figure_3(rows, out / "energy_fig3.png"),
        write_figure_4(baselines, out / "energy_fig4.png"),
    ]
    console.console.print(f"wrote {', '.join(str(path) for path in written)}", markup=False, soft_wrap=True)
    console.console.print(f"ran in {time.perf_counter() - started:.1f} s")


TABLE_1_SHIELDS = ("unshielded", "energy", "static-fair", "dynamic")
TABLE_1_DECISIONS, TABLE_1_REPETITIONS = 500, 10
"""The fairness-shield paper's periodic setup: 10 periods of 50, repeated 10 times (seeds SEED … SEED + 9)."""


def print_table_1(seed: int) -> None:
    """DP after a third of the stream, at its end, and interventions, mean ± sd over the repetitions, per data set and classifier."""
    from fairstream.lab.studies.shields import CLASSIFIERS, DATASETS, KAPPA, compare, summarize  # needs the studies extra

    rows = []
    with console.progress() as progress:
        task = progress.add_task("Table 1", total=len(DATASETS) * len(CLASSIFIERS) * TABLE_1_REPETITIONS)
        for name in DATASETS:
            for classifier in CLASSIFIERS:
                runs = []
                for offset in range(TABLE_1_REPETITIONS):
                    runs.append(compare(name, TABLE_1_DECISIONS, seed + offset, classifier=classifier))
                    progress.advance(task)
                summary = summarize(runs)
                for shield in TABLE_1_SHIELDS:
                    third, end, loss = summary[shield].dp_third, summary[shield].dp_end, summary[shield].utility_loss
                    flips = (loss[0] * TABLE_1_DECISIONS, loss[1] * TABLE_1_DECISIONS)
                    rows.append((f"{name}, {classifier}", shield, f"{third[0]:.3f} ± {third[1]:.3f}", f"{end[0]:.3f} ± {end[1]:.3f}", f"{flips[0]:.1f} ± {flips[1]:.1f}"))
    console.table(
        f"Table 1: {TABLE_1_DECISIONS} decisions × {TABLE_1_REPETITIONS} runs; baselines keep DP ≤ κ = {KAPPA:g} every 50, the energy shield S = [−κ, κ], L = [−κ/2, κ/2]",
        ["data, classifier", "shield", f"DP after {TABLE_1_DECISIONS // 3}", f"DP after {TABLE_1_DECISIONS}", "interventions"],
        rows,
        right=(2, 3, 4),
    )

