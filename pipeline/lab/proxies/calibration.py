"""How the calibration test behaves, by simulation: proxies that are calibrated, shrunk halfway to uniform, sharpened
or with one group's probability halved, on streams where a share of the trials carry their self-reported group; how
often each is found miscalibrated, and how far the estimates and the recalibrated ones lie from the true rates (pure,
seeded)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fairstream.estimators.proxy import ProxyLayout, proxy_rates
from fairstream.estimators.proxy_calibration import calibration
from fairstream.lab.proxies.streams import GROUPS, RATES


def _shrunk(p: np.ndarray) -> np.ndarray:
    return (p + 1 / p.shape[1]) / 2


def _sharpened(p: np.ndarray) -> np.ndarray:
    return p**2 / (p**2).sum(axis=1, keepdims=True)


def _halved(p: np.ndarray) -> np.ndarray:
    q = p * np.array([1.0, 1.0, 0.5])
    return q / q.sum(axis=1, keepdims=True)


PROXIES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "calibrated": lambda p: p,
    "shrunk halfway to uniform": _shrunk,
    "sharpened (squared, normalised)": _sharpened,
    "group c's probability halved": _halved,
}


@dataclass(frozen=True)
class CalibrationCase:
    """One proxy over `runs` streams: how many were found miscalibrated, and the mean over streams of the largest error
    of the estimates and of the recalibrated estimates (NaN where none was fitted)."""

    proxy: str
    runs: int
    flagged: int
    estimate_error: float
    recalibrated_error: float


def calibration_cases(runs: int, trials: int = 3000, reported: float = 0.15, seed: int = 0) -> list[CalibrationCase]:
    """Every proxy of `PROXIES` over `runs` streams of `trials` Dirichlet(0.6) vectors, the true group drawn from each,
    a `reported` share of the trials carrying it."""
    layout = ProxyLayout(GROUPS, calibration=True)
    cases = []
    for name, proxy in PROXIES.items():
        flagged, errors, recalibrated_errors = 0, [], []
        for run in range(runs):
            rng = np.random.default_rng(seed + run)
            truth = rng.dirichlet([0.6] * len(GROUPS), size=trials)
            group = (rng.random(trials)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
            approved = rng.random(trials) < np.asarray(RATES)[group]
            truths = np.where(rng.random(trials) < reported, group, -1)
            sums = layout.sums(proxy(truth), approved, np.ones(trials, bool), truths)
            checked = calibration(layout, sums)
            flagged += checked.held is False
            estimated = proxy_rates(layout, sums, trials)
            if estimated is not None:
                errors.append(float(np.abs(estimated.rates - RATES).max()))
            if checked.recalibration is not None:
                again = proxy_rates(layout, sums, trials, checked.recalibration)
                if again is not None:
                    recalibrated_errors.append(float(np.abs(again.rates - RATES).max()))
        cases.append(CalibrationCase(name, runs, flagged, float(np.mean(errors)), float(np.mean(recalibrated_errors)) if recalibrated_errors else float("nan")))
    return cases
