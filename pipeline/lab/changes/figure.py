"""One picture of change detection: a stream whose gap moves at decision 5,000, its moving gap with the true gap, the
change point found and when; and where the change points of many such streams fell (lab)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fairstream.lab.changes.streams import decisions, detect

WINDOW = 500
"""Decisions per group in the moving gap drawn (for the eye only: the detector reads every pair)."""


def write_change_figure(path: Path, change_points: list[int], *, n: int = 10_000, change_at: int = 5_000, gap: float = 0.15, shift: float = 0.1, arl: float = 1e6, near: int = 750, seed: int = 0) -> Path:
    """A 1200×800 PNG: one stream on top, the histogram of `change_points` (decisions) below."""
    in_a, approved = decisions(seed, n, change_at, gap)
    found = detect(in_a, approved, shift, arl)
    index = np.arange(n)
    figure = Figure(figsize=(12, 8), dpi=100, layout="constrained")
    top, bottom = figure.subplots(2, 1)
    rate_a = _moving(approved, in_a)
    rate_b = _moving(approved, ~in_a)
    top.plot(index, rate_a - rate_b, color="#555555", linewidth=1, label=f"gap over the last {WINDOW} decisions of each group")
    top.step([0, change_at, n], [0, gap, gap], where="post", color="black", linewidth=2, label=f"true gap (moves at decision {change_at:,})")
    for change in found:
        top.axvline(change.changed_at, color="tab:purple", linewidth=2, label=f"change point found: decision {change.changed_at:,}")
        top.axvline(change.found_at, color="tab:purple", linestyle=":", linewidth=2, label=f"found at decision {change.found_at:,}")
    top.set_xlabel("decision")
    top.set_ylabel("gap, a − b")
    top.legend(loc="upper left", fontsize=9)
    top.set_title(f"Two groups 1:1, a decision a minute; shift {shift}, ARL {arl:,.0f} trials")
    offsets = np.asarray(change_points) - change_at
    bottom.hist(offsets, bins=np.arange(-2000, 2001, 100), color="tab:purple", alpha=0.7)
    bottom.axvspan(-near, near, color="tab:green", alpha=0.12, label=f"within {near} decisions of the move")
    bottom.set_xlabel("estimated change point − true change point (decisions)")
    bottom.set_ylabel("streams")
    bottom.legend(loc="upper right", fontsize=9)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure).print_png(path)
    return path


def _moving(approved: np.ndarray, member: np.ndarray) -> np.ndarray:
    """Each decision's moving rate of one group: its last `WINDOW` decisions (nan before it has any)."""
    hits = np.cumsum(approved & member)
    counts = np.cumsum(member)
    order = np.flatnonzero(member)
    rate = np.full(len(approved), np.nan)
    for position in range(len(approved)):
        seen = counts[position]
        if seen == 0:
            continue
        first = order[max(0, seen - WINDOW)]
        rate[position] = (hits[position] - (hits[first - 1] if first > 0 else 0)) / min(seen, WINDOW)
    return rate
