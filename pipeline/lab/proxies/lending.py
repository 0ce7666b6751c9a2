"""The BISG lending stream read as the monitor reads it, one look every few hundred applicants: the white–black gap of
the probability-weighted rates, of the moment estimates with their anytime confidence sequence, and the true gap the
lender never sees; drawn as one PNG (needs the `bisg` extra)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fairstream.connectors.synthetic.lending import lending_applications
from fairstream.estimators.means import sequence_width
from fairstream.estimators.proxy import ProxyLayout, proxy_rates
from fairstream.proxies.bisg import BISG_GROUPS, bisg

PAIR = ("white", "black")


@dataclass(frozen=True)
class LendingGaps:
    """Per look: applicants counted, the weighted gap, the moment gap and its sequence's half-width; the true gap."""

    applicants: np.ndarray
    weighted: np.ndarray
    moments: np.ndarray
    half_width: np.ndarray
    truth: float


def lending_gaps(applicants: int, seed: int, looks: int = 40, alpha: float = 0.05) -> LendingGaps:
    """Read a seeded lending stream of `applicants` at `looks` evenly spaced looks."""
    stream = lending_applications(applicants, seed)
    vectors = [bisg(event["last_name"], event["zip_code"]) for event in stream.events if event["event"] == "APPLICANT"]
    approved = np.array([event["approved"] for event in stream.events if event["event"] == "DECISION"])
    probabilities = np.array([[vector[group] for group in BISG_GROUPS] for vector in vectors])  # type: ignore[index]
    layout = ProxyLayout(BISG_GROUPS)
    high, low = (BISG_GROUPS.index(group) for group in PAIR)
    marks = [applicants * (look + 1) // looks for look in range(looks)]
    weighted, moments, widths = [], [], []
    for mark in marks:
        estimated = proxy_rates(layout, layout.sums(probabilities[:mark], approved[:mark], np.ones(mark, bool)), mark)
        if estimated is None:
            weighted.append(np.nan), moments.append(np.nan), widths.append(np.nan)
            continue
        weighted.append(estimated.weighted[high] - estimated.weighted[low])
        moments.append(estimated.rates[high] - estimated.rates[low])
        widths.append(sequence_width(alpha / 2, mark) * estimated.gap_error(*PAIR))
    truth = stream.rates[PAIR[0]] - stream.rates[PAIR[1]]
    return LendingGaps(np.array(marks), np.array(weighted), np.array(moments), np.array(widths), truth)


def write_lending_figure(gaps: LendingGaps, path: Path, threshold: float = 0.05) -> Path:
    """The three gaps over the applicants, the moments' sequence as a band, ε as a dashed line; a 1200×600 PNG."""
    figure = Figure(figsize=(12, 6), dpi=100, layout="constrained")
    ax = figure.add_subplot()
    ax.fill_between(gaps.applicants, gaps.moments - gaps.half_width, gaps.moments + gaps.half_width, color="#9ecae1", alpha=0.6, label="its anytime 95 % sequence")
    ax.plot(gaps.applicants, gaps.moments, color="#08519c", linewidth=2, label="moment estimate (fairstream)")
    ax.plot(gaps.applicants, gaps.weighted, color="#d95f0e", linewidth=2, label="probability-weighted rates")
    ax.axhline(gaps.truth, color="black", linewidth=1.5, label=f"true gap {gaps.truth:.3f} (not seen by the lender)")
    ax.axhline(threshold, color="grey", linestyle="--", linewidth=1, label=f"ε = {threshold}")
    ax.set_xlabel("applicants")
    ax.set_ylabel(f"approval-rate gap, {PAIR[0]} − {PAIR[1]}")
    ax.set_ylim(-0.1, 0.35)
    ax.legend(loc="upper right")
    ax.set_title("Race from surname and ZIP code (BISG): the weighted rates shrink the gap, the moments recover it")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure).print_png(path)
    return path
