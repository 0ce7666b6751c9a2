"""One picture of the merged alarm: for pairs drifting alone and together, the share of streams alarmed by each
decision, the first per-pair test beside the merged alarm (lab)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fairstream.lab.alarms.many_pairs import Alarms


def write_alarm_figure(path: Path, measured: dict[str, list[Alarms]], titles: dict[str, str], decisions: dict[str, int]) -> Path:
    """A 1200×500 PNG: one panel per scenario in `measured`, the empirical share alarmed over the decisions."""
    figure = Figure(figsize=(12, 5), dpi=100, layout="constrained")
    axes = figure.subplots(1, len(measured), squeeze=False)[0]
    for panel, (scenario, alarms) in zip(axes, measured.items()):
        grid = np.linspace(0, decisions[scenario], 400)
        for label, color, times in (
            ("first per-pair test (each pair at α/66)", "tab:gray", [a.first_pair for a in alarms]),
            ("merged alarm (one at α)", "tab:red", [a.merged for a in alarms]),
        ):
            found = np.array([np.inf if time is None else time for time in times])
            panel.step(grid, [(found <= x).mean() for x in grid], where="post", color=color, linewidth=2, label=label)
        panel.set(title=titles[scenario], xlabel="decisions", ylabel="share of streams alarmed", ylim=(0, 1.02))
        panel.legend(loc="lower right", fontsize=9)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure).print_png(path)
    return path
