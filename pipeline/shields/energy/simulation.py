"""The synthesized energy function in words, and a Monte Carlo of the one-group energy shield that applies
`EnergyShield.decide`'s rule to many runs at once with numpy (pure)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairstream.shields.energy.drift import fixpoint
from fairstream.shields.energy.functions import MonotoneEnergy
from fairstream.shields.energy.target import Target

# ---------------------------------------------------------------------------------------------------------------------
# The chosen energy function in words


def energy_form(energy: MonotoneEnergy) -> str:
    """The piecewise formula of a member of the monotone family with its numbers filled in (see `MonotoneEnergy`)."""
    a, k, c, x_l, v = energy.alpha, energy.k, energy.pivot, energy.limit_point, energy.level
    (s_lo, s_hi), (lo, hi) = energy.target.running, energy.domain
    if energy.side == 0:
        return f"ζ(x) = {a:.4g}·min(1, (|x − {c:.4g}|/d)^{k}), d = {c - s_lo:.4g} below the pivot and {s_hi - c:.4g} above"
    if energy.side == 1:
        return (
            f"ζ(x) = {v:.4g} + {a * (1 - v):.4g}·min(1, (({x_l:.4g} − x)/{x_l - s_lo:.4g})^{k}) for x ≤ {x_l:.4g}; "
            f"{v:.4g}·(({c:.4g} − x)/{c - x_l:.4g})^{k} up to the pivot {c:.4g}; "
            f"{a:.4g}·min(1, ((x − {c:.4g})/{hi - c:.4g})^{k}) above it"
        )
    return (
        f"ζ(x) = {v:.4g} + {a * (1 - v):.4g}·min(1, ((x − {x_l:.4g})/{s_hi - x_l:.4g})^{k}) for x ≥ {x_l:.4g}; "
        f"{v:.4g}·((x − {c:.4g})/{x_l - c:.4g})^{k} down to the pivot {c:.4g}; "
        f"{a:.4g}·min(1, (({c:.4g} − x)/{c - lo:.4g})^{k}) below it"
    )


# ---------------------------------------------------------------------------------------------------------------------
# Monte Carlo of the one-group energy shield

QUANTILES = (0.05, 0.5, 0.95)
"""The band of F_t drawn over the runs: 5 %, median, 95 %."""


def shield_paths(energy: MonotoneEnergy, decisions: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """The shielded decisions of many runs at once, by `EnergyShield.decide`'s rule; `decisions` and `draws` are (runs, steps).

    At step t (t decisions so far) F = ones/t; below the pivot 1 is favoured, above it 0, at it nothing; an unfavoured
    raw decision becomes the favoured one when its draw u < ζ(F). The first decision is always kept.
    """
    runs, steps = decisions.shape
    shielded = np.empty((runs, steps), dtype=np.int8)
    ones = np.zeros(runs, dtype=np.int64)
    for t in range(steps):
        raw = decisions[:, t]
        if t == 0:
            out = raw
        else:
            before = ones / t
            favoured = (before < energy.pivot).astype(raw.dtype)
            zeta = np.asarray(energy(before))
            flip = (before != energy.pivot) & (raw != favoured) & (draws[:, t] < zeta)
            out = np.where(flip, favoured, raw)
        shielded[:, t] = out
        ones += out
    return shielded


@dataclass(frozen=True)
class Simulation:
    """Summaries over the runs of the shielded process, each per time t = 1 … steps.

    `band` holds the 5 %, 50 % and 95 % quantiles of F_t (rows in `QUANTILES` order); `violations` the mean number of
    t' ≤ t at or after the burn-in with F_t' ∉ S; `interference` the mean share of the first t decisions flipped.
    """

    p: float
    target: Target
    runs: int
    steps: int
    band: np.ndarray
    violations: np.ndarray
    interference: np.ndarray
    final_mean: float
    inside_limit: float
    """Share of runs whose F_steps lies inside L."""
    ever_violated: float
    expected_interference: float
    """|x* − p|, the long-run interference of the energy function."""


def simulate(energy: MonotoneEnergy, p: float, runs: int, steps: int, seed: int, limit: tuple[float, float] | None = None) -> Simulation:
    """Run `runs` seeded paths of `steps` raw Bernoulli(p) decisions through the energy shield and summarize them;
    `limit` is the L the runs should end in (default: the energy's own, which a settle margin shrinks)."""
    rng = np.random.default_rng(seed)
    decisions = (rng.random((runs, steps)) < p).astype(np.int8)
    draws = rng.random((runs, steps))
    shielded = shield_paths(energy, decisions, draws)
    times = np.arange(1, steps + 1)
    fairness = np.cumsum(shielded, axis=1) / times
    s_lo, s_hi = energy.target.running
    l_lo, l_hi = limit or energy.target.limit
    violated = ((fairness < s_lo) | (fairness > s_hi)) & (times >= energy.target.burn_in)
    flipped = np.cumsum(shielded != decisions, axis=1) / times
    return Simulation(
        p=p,
        target=energy.target,
        runs=runs,
        steps=steps,
        band=np.quantile(fairness, QUANTILES, axis=0),
        violations=np.cumsum(violated, axis=1).mean(axis=0),
        interference=flipped.mean(axis=0),
        final_mean=float(fairness[:, -1].mean()),
        inside_limit=float(((fairness[:, -1] >= l_lo) & (fairness[:, -1] <= l_hi)).mean()),
        ever_violated=float(violated.any(axis=1).mean()),
        expected_interference=abs(fixpoint(energy, p) - p),
    )
