"""Draw the fairness-shield paper's Table 2 against ours as a PNG: one point per cell, the diagonal and the 2× band."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from fairstream.lab.studies.fair_training import PAPER_NAMES
from fairstream.lab.studies.paper_tables import FAIRNESS, paper_table_2
from fairstream.report.shields import DPI, write_png

MARKERS = {"diffdp": "v", "erm": "o", "hsic": "<", "laftr": ">", "pr": "P", "static-fair": "s", "static-bw": "^", "dynamic": "D"}
"""One marker per Table 2 column: FinHzn on each classifier, then the periodic shields."""
COLORS = {"demographic_parity": "tab:blue", "equal_opportunity": "tab:orange"}


def write_table_2(ours: Mapping[tuple[str, str, str], float], path: Path, empty: str = "vacuous") -> Path:
    """Draw `ours` (mean utility loss per environment, property and column) against the paper's and write a PNG."""
    return write_png(draw_table_2(ours, empty), path)


def draw_table_2(ours: Mapping[tuple[str, str, str], float], empty: str = "vacuous") -> Figure:
    """Our utility loss (y) against the paper's (x), one panel per property (linear axes: the paper has a negative cell),
    each column in its marker."""
    shown = [fairness for fairness in FAIRNESS if any(key[1] == fairness for key in ours)] or list(FAIRNESS)
    figure = Figure(figsize=(6.5 * len(shown), 6.5), dpi=DPI, layout="constrained")
    panels = dict(zip(shown, figure.subplots(1, len(shown), squeeze=False)[0], strict=True))
    for fairness, axes in panels.items():
        points = [(paper, loss, column) for (environment, property_, column), loss in sorted(ours.items()) if property_ == fairness and (paper := paper_table_2(environment, fairness, column)) is not None]
        top = max([1.0, *(max(paper, loss) for paper, loss, _ in points)]) * 1.08
        low = min([0.0, *(min(paper, loss) for paper, loss, _ in points)]) - 0.03 * top
        for paper, loss, column in points:
            axes.scatter(paper, loss, marker=MARKERS[column], color=COLORS[fairness], s=60, alpha=0.8)
        line = np.array([0.0, top])
        axes.plot([low, top], [low, top], color="black", linewidth=1, label="ours = paper")
        axes.fill_between(line, line / 2, 2 * line, color="grey", alpha=0.15, label="within 2×")
        axes.set(xlim=(low, top), ylim=(low, top), xlabel="the paper's utility loss (%), Table 2, κ = 0.1", ylabel="ours (%), same setup")
        axes.set_title(fairness.replace("_", " "), fontsize=11)
        for column, marker in MARKERS.items():
            axes.scatter([], [], marker=marker, color="grey", label=f"FinHzn on {PAPER_NAMES[column]}" if column in PAPER_NAMES else column)
        axes.legend(loc="upper left", fontsize=9)
    reading = "an empty group's gap vacuous" if empty == "vacuous" else "an empty group's rate 0"
    figure.suptitle(f"Fairness shields (AAAI 2025), Table 2 ({reading})", fontsize=12)
    return figure
