"""What a change record states, checked by simulation: how often its intervals cover the true gaps before and after
the change, and how many trials pass between false alarms on streams whose gap never moves (restarts included)."""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import binomtest, chi2

from fairstream.lab.changes.streams import decisions, detect
from fairstream.verdicts.changes import Detection, change_record

LEVEL = 0.05


@dataclass(frozen=True)
class Coverage:
    """Over the streams whose change was found: how often each interval held its true gap."""

    gap: float
    share: float
    found: int
    before: int
    after: int

    @staticmethod
    def interval(hits: int, runs: int) -> tuple[float, float]:
        found = binomtest(hits, runs).proportion_ci(0.95)
        return found.low, found.high


def coverage(runs: int, gap: float, share: float, n: int = 10_000, shift: float = 0.1, arl: float = 1e6, seed: int = 0) -> Coverage:
    """`runs` streams whose gap moves from 0 to `gap` at the middle decision: the first alarm after the move, its
    record's intervals against 0 and `gap`."""
    found = before = after = 0
    detection = Detection(shift, arl)
    for run in range(runs):
        changes = [change for change in detect(*decisions(seed + run, n, n // 2, gap, share), shift, arl) if change.found_at >= n // 2]
        if not changes:
            continue
        record = change_record("m", "part", ("a", "b"), changes[0], detection, LEVEL)
        low, high = record["gap_before_interval"]
        found, before = found + 1, before + (low <= 0 <= high)
        low, high = record["gap_after_interval"]
        after += low <= gap <= high
    return Coverage(gap, share, found, before, after)


@dataclass(frozen=True)
class RunLength:
    """Trials between false alarms on streams whose gap never moves."""

    share: float
    arl: float
    trials: int
    alarms: int

    @property
    def between(self) -> float:
        return self.trials / self.alarms if self.alarms else float("inf")

    def interval(self) -> tuple[float, float]:
        """95 % interval of the mean trials between alarms (alarms as a Poisson count over the trials)."""
        low = chi2.ppf(0.025, 2 * self.alarms) / 2 if self.alarms else 0.0
        high = chi2.ppf(0.975, 2 * self.alarms + 2) / 2
        return self.trials / high, (self.trials / low if low else float("inf"))


def run_length(streams: int, share: float, arl: float, n: int = 200_000, shift: float = 0.1, seed: int = 0) -> RunLength:
    """`streams` stationary streams of `n` decisions (both groups at the same rate), every alarm counted."""
    alarms = sum(len(detect(*decisions(seed + run, n, share=share), shift, arl)) for run in range(streams))
    return RunLength(share, arl, streams * n, alarms)
