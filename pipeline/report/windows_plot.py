"""A run's windows over raw events as a PNG: one panel per window, a line per group over event time, and the spans
where a trigger stood raised shaded and named (pure drawing; `fairstream plot` writes it beside the fairness figure)."""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import Any

from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure

from fairstream.monitoring.event_windows import window_series
from fairstream.monitoring.triggers import raised_spans

SIZE, DPI = (16, 9), 100
COLUMNS = 3


def draw_windows(estimates: list[dict[str, Any]], alerts: list[dict[str, Any]], moment: Any, title: str, png_path: Path) -> Path | None:
    """Write the windows' figure to `png_path`; None (nothing written) where no estimate carries windows."""
    series = window_series(estimates, moment, missing=math.nan)
    if not series:
        return None
    spans = raised_spans(alerts, moment, moment(estimates[-1]))
    triggers = sorted({trigger for trigger, _, _ in spans})
    shades = {trigger: colormaps["Pastel1"](index % 9) for index, trigger in enumerate(triggers)}
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    columns = min(len(series), COLUMNS)
    rows = math.ceil(len(series) / columns)
    for index, (name, groups) in enumerate(sorted(series.items())):
        ax = figure.add_subplot(rows, columns, index + 1)
        for trigger, start, stop in spans:
            ax.axvspan(start, stop, color=shades[trigger], alpha=0.5, linewidth=0, label=f"trigger {trigger} raised")
        for group, (times, values) in sorted(groups.items()):
            ax.plot(times, values, linewidth=1.3, label=group or name)
        handles, labels = ax.get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        ax.legend(unique.values(), unique.keys(), title=name, fontsize=8, loc="upper left", frameon=False)
        ax.grid(alpha=0.3)
        if isinstance(next(iter(groups.values()))[0][0], datetime):
            locator = AutoDateLocator()
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    figure.suptitle(title, fontsize=14)
    png_path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure).print_png(png_path)
    return png_path
