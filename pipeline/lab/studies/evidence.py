"""How many trials a group needs before a point verdict judges it (the default evidence floor): fair pairs simulated.

A point verdict compares estimates, whatever the number of trials behind them. With plain rates (κ = 0) a group of n
trials at true rate p has a standard error of √(p(1−p)/n), at most 1/(2√n); a fair group checked against a large one
strays beyond the threshold ε by noise alone about one time in twenty once that error is ε/2, at n = 1/ε². The
study draws fair pairs (both groups at rate p, the reference group `REFERENCE_SHARE` times larger) and counts how
often the verdict alarms when the small group reaches a candidate floor, and how often at some check while it grows
to ten times that (the monitor checks every tick, so a point verdict without a floor keeps alarming on fair groups).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RATES = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
"""True rates of the fair pairs: the noise of a rate is largest at 1/2."""
REFERENCE_SHARE = 10
"""The reference group's trials per trial of the small group."""
CHECKS = 37
"""Checks on the way from the floor to ten times it, a quarter of the floor apart."""


@dataclass(frozen=True)
class FloorResult:
    """Per true rate p: the share of fair pairs that alarm at the first check, and at some check up to 10× the floor."""

    floor: int
    first_check: dict[float, float]
    any_check: dict[float, float]

    @property
    def worst_first(self) -> tuple[float, float]:
        """(rate, share) of the rate with the most false alarms at the first check."""
        return max(self.first_check.items(), key=lambda item: (item[1], item[0]))

    @property
    def worst_any(self) -> tuple[float, float]:
        return max(self.any_check.items(), key=lambda item: (item[1], item[0]))


def simulate_floors(threshold: float, floors: Sequence[int], *, runs: int = 20_000, rates: Sequence[float] = RATES, seed: int = 0) -> list[FloorResult]:
    """False alarms of point verdicts on plain rates (κ = 0) over fair pairs, per candidate floor (seeded: reproducible)."""
    rng = np.random.default_rng(seed)
    results = []
    for floor in floors:
        first: dict[float, float] = {}
        anywhere: dict[float, float] = {}
        step = max(1, floor // 4)
        sizes = floor + step * np.arange(CHECKS)  # the small group's trials at each check
        for rate in rates:
            small = np.cumsum(rng.binomial(np.diff(sizes, prepend=0), rate, size=(runs, CHECKS)), axis=1) / sizes
            reference = np.cumsum(rng.binomial(np.diff(REFERENCE_SHARE * sizes, prepend=0), rate, size=(runs, CHECKS)), axis=1) / (REFERENCE_SHARE * sizes)
            alarms = np.abs(small - reference) > threshold
            first[rate] = float(alarms[:, 0].mean())
            anywhere[rate] = float(alarms.any(axis=1).mean())
        results.append(FloorResult(floor, first, anywhere))
    return results
