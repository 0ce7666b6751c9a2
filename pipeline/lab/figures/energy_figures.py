"""Draw the energy-shield paper's Figs. 1–4 as reproduced by `fairstream.lab.studies.energy_figures`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from fairstream.lab.studies.energy_figures import DECISION_MAKERS, GROUP_TARGET, TARGET, HorizonRow, Paths
from fairstream.report.shields import DPI, L_COLOR, S_COLOR, SIZE, write_png
from fairstream.shields.energy.target import Target


def _bands(ax, bands: dict[str, np.ndarray], colors, target: Target) -> None:
    """Each labelled median and 5–95 % band over time (rows of a band: 5 %, 50 %, 95 %), with S, L and the burn-in."""
    for color, (label, (low, median, high)) in zip(colors, bands.items(), strict=False):
        times = np.arange(1, len(median) + 1)
        ax.fill_between(times, low, high, color=color, alpha=0.12, linewidth=0)
        ax.plot(times, median, color=color, linewidth=1.4, label=label)
    for bounds, color, name in ((target.running, S_COLOR, "S"), (target.limit, L_COLOR, "L")):
        for index, value in enumerate(bounds):
            ax.axhline(value, color=color, linestyle="--", linewidth=1, label=name if index == 0 else None)
    ax.axvline(target.burn_in, color="black", linestyle=":", linewidth=0.8)


def write_figure_1(results: dict[str, dict[str, Paths]], path: Path) -> Path:
    """One panel per decision maker: each shield's median F_t and its 5–95 % band over the runs, with S and L."""
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    axes = figure.subplots(1, len(results), sharey=True)
    palette = colormaps["tab10"].colors
    for ax, (maker, shields) in zip(np.atleast_1d(axes), results.items(), strict=True):
        labels = {name: f"{name}: {paths.violated:.0%} leave S, {paths.interference:.3f} flipped" for name, paths in shields.items()}
        _bands(ax, {labels[name]: paths.band for name, paths in shields.items()}, palette, TARGET)
        ax.set(xscale="log", ylim=(0.2, 0.7), xlabel="decisions t", title=f"{maker} decision maker, p = {DECISION_MAKERS[maker]:g}")
        ax.legend(loc="lower right", fontsize=9)
    np.atleast_1d(axes)[0].set_ylabel("F_t (median and 5–95 % of runs)")
    figure.suptitle("Energy functions against the idle and the deterministic shield (energy-shield paper, Fig. 1)", fontsize=14)
    return write_png(figure, path)


def write_figure_2(results: dict[str, dict[str, Paths]], path: Path) -> Path:
    """One panel per scenario: each two-group shield's median gap D_t and its 5–95 % band, with S and L."""
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, len(results), sharey=True))
    for ax, (scenario, shields) in zip(axes, results.items(), strict=True):
        labels = {name: f"{name}: {paths.violated:.0%} leave S, {paths.inside_limit:.0%} end in L" for name, paths in shields.items()}
        _bands(ax, {labels[name]: paths.band for name, paths in shields.items()}, ("tab:orange", "tab:blue"), GROUP_TARGET)
        ax.set(xscale="log", ylim=(-0.3, 0.4), xlabel="decisions t", title=scenario)
        ax.legend(loc="upper right", fontsize=9)
    axes[0].set_ylabel("D_t = r_a − r_b (median and 5–95 % of runs)")
    figure.suptitle("Two groups: the raw gap told, estimated online, and changing (energy-shield paper, Fig. 2)", fontsize=14)
    return write_png(figure, path)


def write_figure_3(rows: list[HorizonRow], path: Path) -> Path:
    """The tail bound beyond the horizon T and the time of the exact programme plus the bound, against T."""
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    bound_ax, time_ax = figure.subplots(1, 2)
    horizons = [row.horizon for row in rows]
    bound_ax.plot(horizons, [max(row.tail, 1e-300) for row in rows], marker="o", color=S_COLOR, label="tail bound Σ_{t>T} P(F_t ∉ S)")
    bound_ax.plot(horizons, [row.violation for row in rows], marker="s", color="black", label="exact P(some F_t ∉ S, τ ≤ t ≤ T)")
    bound_ax.set(xscale="log", yscale="log", xlabel="horizon T", title="Precision: the tail bound falls exponentially in T")
    bound_ax.legend()
    time_ax.plot(horizons, [row.seconds for row in rows], marker="o", color="tab:blue")
    time_ax.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="seconds", title="Time of the exact programme and the bound")
    figure.suptitle("The horizon of the dynamic programme (energy-shield paper, Fig. 3)", fontsize=14)
    return write_png(figure, path)


def write_figure_4(results: dict[str, Paths], path: Path) -> Path:
    """Left: each shield's median F_t and 5–95 % band; right: the share of decisions each flipped."""
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    paths_ax, cost_ax = figure.subplots(1, 2, width_ratios=(2, 1))
    palette = colormaps["tab10"].colors
    labels = {name: f"{name}: {paths.violated:.0%} leave S, {paths.inside_limit:.0%} end in L" for name, paths in results.items()}
    _bands(paths_ax, {labels[name]: paths.band for name, paths in results.items()}, palette, TARGET)
    paths_ax.set(xscale="log", ylim=(0.2, 0.7), xlabel="decisions t", ylabel="F_t (median and 5–95 % of runs)", title="biased decision maker, p = 0.3")
    paths_ax.legend(loc="lower right", fontsize=9)
    names = list(results)
    cost_ax.barh(names, [results[name].interference for name in names], color=palette[: len(names)])
    cost_ax.invert_yaxis()
    cost_ax.set(xlabel="share of decisions flipped", title="Cost")
    figure.suptitle("The energy shield against the naive and the periodic shield, tuned to S and to L (energy-shield paper, Fig. 4)", fontsize=14)
    return write_png(figure, path)

