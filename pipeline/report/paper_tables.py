"""Draw the fairness-shield paper's Table 2 against ours as a PNG: one point per cell, the diagonal and the 2× band."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from matplotlib.figure import Figure

from fairstream.report.shields import DPI, write_png
from fairstream.studies.fair_training import PAPER_NAMES
from fairstream.studies.paper_tables import FAIRNESS, paper_table_2

MARKERS = {"diffdp": "v", "erm": "o", "hsic": "<", "laftr": ">", "pr": "P", "static-fair": "s", "static-bw": "^", "dynamic": "D"}
"""One marker per Table 2 column: FinHzn on each classifier, then the periodic shields."""
COLORS = {"demographic_parity": "tab:blue", "equal_opportunity": "tab:orange"}


def write_table_2(ours: Mapping[tuple[str, str, str], float], path: Path, empty: str = "vacuous") -> Path:
    """Draw `ours` (mean utility loss per environment, property and column) against the paper's and write a PNG."""
    return write_png(draw_table_2(ours, empty), path)


def draw_table_2(ours: Mapping[tuple[str, str, str], float], empty: str = "vacuous") -> Figure:
    """Our utility loss (y) against the paper's (x), each property in its colour and each column in its marker."""
    figure = Figure(figsize=(9, 8), dpi=DPI, layout="constrained")
    axes = figure.subplots()
    top, low = 1.0, 0.0
    for (environment, fairness, column), loss in sorted(ours.items()):
        paper = paper_table_2(environment, fairness, column)
        if paper is None:
            continue
        top, low = max(top, loss, paper), min(low, loss, paper)
        axes.scatter(paper, loss, marker=MARKERS[column], color=COLORS[fairness], s=60, alpha=0.8)
    line = [0.05, 1.1 * top]
    axes.plot(line, line, color="black", linewidth=1, label="ours = paper")
    axes.fill_between(line, [v / 2 for v in line], [2 * v for v in line], color="grey", alpha=0.15, label="within 2×")
    for column, marker in MARKERS.items():
        axes.scatter([], [], marker=marker, color="grey", label=f"FinHzn on {PAPER_NAMES[column]}" if column in PAPER_NAMES else column)
    for fairness in FAIRNESS:
        axes.scatter([], [], marker="o", color=COLORS[fairness], label=fairness.replace("_", " "))
    axes.set(
        xscale="symlog",
        yscale="symlog",
        xlim=(1.1 * low - 0.05, 1.1 * top),
        ylim=(1.1 * low - 0.05, 1.1 * top),
        xlabel="the paper's utility loss (%), Table 2, κ = 0.1",
        ylabel="ours (%), same setup",
    )
    reading = "an empty group's gap vacuous" if empty == "vacuous" else "an empty group's rate 0"
    axes.set_title(f"Fairness shields (AAAI 2025), Table 2 ({reading})", fontsize=12)
    axes.legend(loc="upper left", fontsize=9)
    return figure
