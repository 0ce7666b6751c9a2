"""Draw the shields compared on real decision streams as a PNG (needs the `studies` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from fairstream.lab.studies.shields import KAPPA, SHIELDS, Comparison
from fairstream.report.shields import DPI, S_COLOR, SIZE, write_png

GAP_LABEL = {"demographic_parity": "|r_a − r_b|", "equal_opportunity": "|TPR_a − TPR_b| (label 1 only)"}
SHIELD_COLORS = dict(zip(SHIELDS, colormaps["tab10"].colors, strict=False))


def write_comparison(comparisons: Sequence[Comparison], path: Path) -> Path:
    """Draw the comparison and write it as a 1600×900 PNG at `path`."""
    return write_png(draw_comparison(comparisons), path)


def draw_comparison(comparisons: Sequence[Comparison]) -> Figure:
    """One column per data set: |r_a − r_b| over the stream for every shield above a bar chart of their interventions."""
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    axes = np.asarray(figure.subplots(2, len(comparisons), squeeze=False))
    for column, comparison in enumerate(comparisons):
        gaps, bars = axes[0, column], axes[1, column]
        times = np.arange(1, comparison.decisions + 1)
        for shield in SHIELDS:
            gaps.plot(times, comparison.parity[shield], color=SHIELD_COLORS[shield], label=shield, linewidth=1.2)
        gaps.axhline(KAPPA, color=S_COLOR, linestyle="--", linewidth=1, label="κ")
        gaps.axvline(comparison.decisions // 3, color="grey", linestyle=":", linewidth=1)
        gaps.set(xlabel="decisions", ylabel=GAP_LABEL[comparison.fairness], ylim=(0, max(0.3, 1.1 * comparison.raw_gap)))
        gaps.set_title(f"{comparison.name}: {comparison.groups[0]} vs {comparison.groups[1]}", fontsize=13)
        counts = [comparison.interventions[shield] for shield in SHIELDS]
        bars.bar(SHIELDS, counts, color=[SHIELD_COLORS[shield] for shield in SHIELDS])
        bars.set(ylabel="interventions")
        bars.tick_params(axis="x", labelrotation=30)
    axes[0, 0].legend(loc="upper right")
    title = "Demographic parity" if comparisons[0].fairness == "demographic_parity" else "Equal opportunity"
    figure.suptitle(f"{title} of the shielded decisions", fontsize=14)
    return figure
