"""One picture of change detection: a stream whose gap moves, its moving gap with the true gap, the change point found
and when; where many streams' change points fell; and the median delay of the detector beside the oracle's (lab)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fairstream.lab.changes.near_oracle import NEAR, Comparison, split
from fairstream.lab.changes.streams import decisions, detect

WINDOW = 500
"""Decisions per group in the moving gap drawn (for the eye only: the detector reads every pair)."""
SHOWN_AFTER = 10_000
"""Decisions drawn after the move."""


def write_change_figure(path: Path, comparisons: Sequence[Comparison], shown: Comparison, *, shift: float = 0.1, arl: float = 1e6, seed: int = 0) -> Path:
    """A 1400×900 PNG: one stream of the setting `shown` on top; below, the histogram of its change points and the
    median delays of every comparison, the detector's beside the oracle's."""
    change_at, gap = shown.change_at, shown.gap
    n = change_at + SHOWN_AFTER
    in_a, approved = decisions(seed, n, change_at, gap, shown.share)
    found = detect(in_a, approved, shift, arl)
    index = np.arange(n)
    figure = Figure(figsize=(14, 9), dpi=100, layout="constrained")
    panels = figure.subplot_mosaic([["top", "top"], ["left", "right"]])
    top, left, right = panels["top"], panels["left"], panels["right"]
    top.plot(index, _moving(approved, in_a) - _moving(approved, ~in_a), color="#555555", linewidth=1, label=f"gap over the last {WINDOW} decisions of each group")
    top.step([0, change_at, n], [0, gap, gap], where="post", color="black", linewidth=2, label=f"true gap (moves at decision {change_at:,})")
    for change in found:
        top.axvline(change.changed_at, color="tab:purple", linewidth=2, label=f"change point found: decision {change.changed_at:,}")
        top.axvline(change.found_at, color="tab:purple", linestyle=":", linewidth=2, label=f"found at decision {change.found_at:,}")
    top.set_ylim(min(-0.2, -gap), max(0.2, 2 * gap))
    top.set(xlabel="decision", ylabel="gap, a − b", title=f"Two groups {split(shown.share)}, a decision a minute; shift {shift}, ARL {arl:,.0f} trials")
    top.legend(loc="upper left", fontsize=9)
    left.hist(shown.offsets, bins=np.arange(-2000, 2001, 100), color="tab:purple", alpha=0.7)
    left.axvspan(-NEAR, NEAR, color="tab:green", alpha=0.12, label=f"within {NEAR} decisions of the move")
    left.set(xlabel="estimated change point − true change point (decisions)", ylabel="streams", title=f"Move 0 → {gap:g} at decision {change_at:,}: {len(shown.offsets)} streams found")
    left.legend(loc="upper right", fontsize=9)
    _delays(right, comparisons)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure).print_png(path)
    return path


def _delays(axes, comparisons: Sequence[Comparison]) -> None:
    """Median delays as bars, three a setting (endless medians drawn at the top, hatched)."""
    labels = [f"{c.gap:g}\n{split(c.share)}\n@{c.change_at // 1000}k" for c in comparisons]
    place = np.arange(len(comparisons))
    ceiling = 4 * max((c.median(c.oracle) for c in comparisons), default=1.0)
    bars = (
        (-0.27, "detector", "tab:purple", lambda c: c.detector),
        (0.0, "bound (knows the move, not the gap before)", "tab:orange", lambda c: c.bound),
        (0.27, "oracle (knows the gaps)", "tab:gray", lambda c: c.oracle),
    )
    for offset, name, color, pick in bars:
        medians = np.array([c.median(pick(c)) for c in comparisons])
        endless = ~np.isfinite(medians)
        axes.bar(place[~endless] + offset, medians[~endless], width=0.27, color=color, label=name)
        axes.bar(place[endless] + offset, np.full(endless.sum(), ceiling), width=0.27, color="none", edgecolor=color, hatch="//")
    axes.set_xticks(place, labels, fontsize=8)
    axes.set_yscale("log")
    axes.set(ylabel="median delay (decisions)", title="Median delay: move, groups, decision of the move (hatched: not found)")
    axes.legend(loc="upper left", fontsize=9)


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
