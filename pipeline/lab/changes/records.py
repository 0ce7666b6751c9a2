"""What a change record states, checked by simulation: how often its intervals cover the true gaps before and after
the change, how many trials pass between false alarms on streams whose gap never moves (restarts included), and the
false alarms per trial over every detector of a monitor of many groups."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, chi2

from fairstream.lab.changes.streams import decisions, detect
from fairstream.trials.outcomes import TrialOutcome
from fairstream.verdicts.changes import ChangeEvidence, Detection, change_record

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


def poisson_interval(count: int) -> tuple[float, float]:
    """The exact 95 % interval of a Poisson mean from one `count` (Garwood)."""
    low = chi2.ppf(0.025, 2 * count) / 2 if count else 0.0
    return low, chi2.ppf(0.975, 2 * count + 2) / 2


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
        """95 % interval of the mean trials between alarms."""
        low, high = poisson_interval(self.alarms)
        return self.trials / high, (self.trials / low if low else float("inf"))


def run_length(streams: int, share: float, arl: float, n: int = 200_000, shift: float = 0.1, seed: int = 0) -> RunLength:
    """`streams` stationary streams of `n` decisions (both groups at the same rate), every alarm counted."""
    alarms = sum(len(detect(*decisions(seed + run, n, share=share), shift, arl)) for run in range(streams))
    return RunLength(share, arl, streams * n, alarms)


@dataclass(frozen=True)
class Patience:
    """False alarms over every detector of a monitor of `groups` groups on streams that never move, against the error
    over patience the shared `arl` bounds: the false alarms expected by any time at most its trials over `arl`."""

    groups: int
    arl: float
    trials: int
    alarms: int

    @property
    def per_trial(self) -> float:
        return self.alarms / self.trials

    def interval(self) -> tuple[float, float]:
        """95 % interval of the false alarms per trial."""
        low, high = poisson_interval(self.alarms)
        return low / self.trials, high / self.trials


def patience(streams: int, groups: int, arl: float, n: int = 100_000, shift: float = 0.1, seed: int = 0) -> Patience:
    """`streams` streams of `n` trials, each of a group drawn evenly, every group approved half the time, fed to the
    change evidence of a monitor that lists the groups (its pairs share `arl`)."""
    names = [f"g{index:02d}" for index in range(groups)]
    declared = groups * (groups - 1) // 2
    alarms = 0
    for stream in range(streams):
        rng = np.random.default_rng(seed + 7_000_000 + stream)
        evidence = ChangeEvidence(Detection(shift, arl, declared))
        chosen, approved = rng.integers(0, groups, n), rng.random(n) < 0.5
        for index in range(n):
            cell = ("selection_rate", names[chosen[index]], float(approved[index]))
            evidence.hold(TrialOutcome(index, f"t{index}", [cell], {}), [cell])
        alarms += len(evidence.take())
    return Patience(groups, arl, streams * n, alarms)
