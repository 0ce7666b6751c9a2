"""Draw the Monte Carlo of the energy shield as a PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fairstream.shields.energy.simulation import Simulation

SIZE = (16, 9)
DPI = 100
S_COLOR = "tab:red"
L_COLOR = "tab:green"
BAND_COLOR = "tab:blue"


def write_png(figure: Figure, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure).print_png(path)
    return path


def write_simulation(simulation: Simulation, path: Path) -> Path:
    """Draw the Monte Carlo and write it as a 1600×900 PNG at `path`."""
    return write_png(draw_simulation(simulation), path)


def draw_simulation(simulation: Simulation) -> Figure:
    """Three panels over t: the 5–95 % band and median of F_t with S and L, mean accumulated violations, mean interference rate."""
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    fairness_ax, violations_ax, interference_ax = figure.subplots(1, 3)
    times = np.arange(1, simulation.steps + 1)
    low, median, high = simulation.band
    fairness_ax.fill_between(times, low, high, color=BAND_COLOR, alpha=0.25, label="5–95 % of runs")
    fairness_ax.plot(times, median, color=BAND_COLOR, label="median")
    _bounds(fairness_ax, simulation.target.running, S_COLOR, "S")
    _bounds(fairness_ax, simulation.target.limit, L_COLOR, "L")
    fairness_ax.axhline(simulation.p, color="grey", linestyle=":", label=f"p = {simulation.p:g}")
    fairness_ax.axvline(simulation.target.burn_in, color="black", linewidth=0.8, linestyle=":", label="burn-in τ")
    fairness_ax.set(xscale="log", ylim=(0, 1), xlabel="decisions t", ylabel="F_t (share of shielded 1s)", title="Running fairness F_t")
    fairness_ax.legend(loc="lower right")

    violations_ax.plot(times, simulation.violations, color=S_COLOR)
    violations_ax.set(xscale="log", xlabel="decisions t", ylabel="mean violations up to t", title="Accumulated violations of S after τ")

    interference_ax.plot(times, simulation.interference, color=BAND_COLOR, label="mean share flipped")
    interference_ax.axhline(simulation.expected_interference, color="grey", linestyle="--", label="|x* − p|")
    interference_ax.set(xscale="log", ylim=(0, 1), xlabel="decisions t", ylabel="flipped / t", title="Interventions")
    interference_ax.legend(loc="upper right")
    figure.suptitle(f"Energy shield, p = {simulation.p:g}: {simulation.runs} runs × {simulation.steps} decisions", fontsize=14)
    return figure


def _bounds(ax: Axes, interval: tuple[float, float], color: str, name: str) -> None:
    for index, value in enumerate(interval):
        ax.axhline(value, color=color, linestyle="--", linewidth=1, label=name if index == 0 else None)
