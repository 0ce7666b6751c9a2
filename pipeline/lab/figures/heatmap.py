"""Draw a tuning study as one PNG: trigger counts per (κ, ε) for each assignment algorithm, and the Randomize/EqualGender ratio."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Colormap, LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.ticker import NullFormatter

from fairstream.lab.studies.tuning import FAIR, UNFAIR, Tuning, ratio_label

SIZE = (16, 9)
DPI = 100
COUNT_COLORS = "YlOrRd"
RATIO_COLORS = "viridis"
RATIO_TICKS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
EMPTY_COLOR = "#e6e6e6"
"""Background of cells a log scale cannot show: no triggers, or an infinite or undefined ratio."""


def write_heatmap(tuning: Tuning, path: Path) -> Path:
    """Draw the study and write it as a 1600×900 PNG at `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(draw(tuning)).print_png(path)
    return path


def draw(tuning: Tuning) -> Figure:
    """The algorithms' trigger counts in a 2×2 block on one shared log scale, the ratio panel to their right."""
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    grid = figure.add_gridspec(2, 3, width_ratios=[1, 1, 1.25])
    counts = tuning.triggers
    positive = counts[counts > 0]
    norm = LogNorm(vmin=1, vmax=max(2, int(positive.max()))) if positive.size else Normalize(0, 1)
    cmap = _with_empty(COUNT_COLORS)
    panels = []
    for index, name in enumerate(tuning.algorithms):
        ax = figure.add_subplot(grid[index // 2, index % 2])
        image = _cells(ax, tuning, np.where(counts[index] > 0, counts[index], np.nan), norm, cmap, [str(int(n)) for n in counts[index].ravel()])
        ax.set_title(name, fontsize=13)
        panels.append(ax)
    figure.colorbar(image, ax=panels, label="triggers (log scale)", shrink=0.9)

    ratio = tuning.ratio()
    shown = np.where(np.isfinite(ratio) & (ratio > 0), ratio, np.nan)
    ax = figure.add_subplot(grid[:, 2])
    finite = shown[~np.isnan(shown)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (1.0, 10.0)
    top, bottom = (tuning.triggers[tuning.algorithms.index(name)].ravel() for name in (UNFAIR, FAIR))
    labels = [ratio_label(int(n), int(d)) for n, d in zip(top, bottom, strict=True)]
    norm = LogNorm(vmin=low, vmax=max(high, low * 10))
    image = _cells(ax, tuning, shown, norm, _with_empty(RATIO_COLORS), labels)
    ax.set_title(f"{UNFAIR} / {FAIR} triggers", fontsize=13)
    bar = figure.colorbar(image, ax=ax, label="ratio (log scale)", shrink=0.9)
    ticks = [tick for tick in RATIO_TICKS if norm.vmin <= tick <= norm.vmax]
    bar.set_ticks(ticks, labels=[f"{tick:g}×" for tick in ticks])
    bar.ax.yaxis.set_minor_formatter(NullFormatter())

    figure.suptitle(
        f"Seminar monitor: evaluations with a violated verdict, {tuning.scenarios:,} scenarios × {tuning.applicants} applicants per algorithm\n"
        f"grey: no triggers; n/0: {FAIR} has none",
        fontsize=14,
    )
    return figure


def _cells(ax: Axes, tuning: Tuning, values: np.ndarray, norm: Normalize, cmap: Colormap, labels: list[str]) -> AxesImage:
    """A κ × ε heatmap (κ upwards), every cell annotated with its label in a colour that reads on its background."""
    image = ax.imshow(values, norm=norm, cmap=cmap, origin="lower", aspect="auto")
    rows, columns = values.shape
    fontsize = 13 if rows * columns <= 25 else 9
    for (row, column), label in zip(np.ndindex(rows, columns), labels, strict=True):
        value = values[row, column]
        background = cmap.get_bad() if math.isnan(value) else cmap(norm(value))
        ax.text(column, row, label, ha="center", va="center", fontsize=fontsize, color=_ink(background))
    ax.set_xticks(range(columns), [f"{epsilon:g}" for epsilon in tuning.epsilons])
    ax.set_yticks(range(rows), [f"{kappa:g}" for kappa in tuning.kappas])
    ax.set_xlabel("ε (threshold)")
    ax.set_ylabel("κ (prior weight)")
    return image


def _with_empty(name: str) -> Colormap:
    return colormaps[name].with_extremes(bad=EMPTY_COLOR)


def _ink(background: tuple[float, ...]) -> str:
    """Black on light cells, white on dark ones (perceived luminance)."""
    red, green, blue = background[:3]
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"

