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

from fairstream.records.envelope import TRIGGER

SIZE, DPI = (16, 9), 100
COLUMNS = 3


def window_series(estimates: list[dict[str, Any]], moment: Any) -> dict[str, dict[str, tuple[list[Any], list[float]]]]:
    """Per window, per group ("" for a window without `by`), its (times, values) over the estimates that carry it."""
    series: dict[str, dict[str, tuple[list[Any], list[float]]]] = {}
    for record in estimates:
        for name, value in (record.get("windows") or {}).items():
            groups = value if isinstance(value, dict) else {"": value}
            for group, number in groups.items():
                times, values = series.setdefault(name, {}).setdefault(group, ([], []))
                times.append(moment(record))
                values.append(math.nan if number is None else float(number))
    return series


def raised_spans(alerts: list[dict[str, Any]], moment: Any, end: Any) -> list[tuple[str, Any, Any]]:
    """(trigger, from, to) for every stretch a trigger stood raised; one still raised runs to `end`."""
    opened: dict[str, Any] = {}
    spans = []
    for alert in alerts:
        if alert.get("type") != TRIGGER:
            continue
        if alert["state"] == "raised":
            opened.setdefault(alert["trigger"], moment(alert))
        elif alert["trigger"] in opened:
            spans.append((alert["trigger"], opened.pop(alert["trigger"]), moment(alert)))
    spans.extend((trigger, start, end) for trigger, start in opened.items())
    return spans


def draw_windows(estimates: list[dict[str, Any]], alerts: list[dict[str, Any]], moment: Any, title: str, png_path: Path) -> Path | None:
    """Write the windows' figure to `png_path`; None (nothing written) where no estimate carries windows."""
    series = window_series(estimates, moment)
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
