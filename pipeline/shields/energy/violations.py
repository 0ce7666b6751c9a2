"""Short-term guarantees of a one-group energy shield: exact violation measures over [τ, T] and a bound for t > T.

The counter chain (t, k), k the number of shielded 1s, moves to (t + 1, k + 1) with probability g(k/t) and to (t + 1, k)
otherwise; it starts at (0, 0) with g(F_0) = g(c) = p. Propagating the distribution of k forward, one numpy
operation per step over the band of counts with non-negligible mass, costs O(T^1.5); the mass that violates S is
moved to an absorbing "violated" total for P_viol.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy import special

from fairstream.shields.energy.drift import ONE_GROUP, bias, fixpoint
from fairstream.shields.energy.functions import Energy
from fairstream.shields.energy.target import Target
from fairstream.shields.errors import ShieldError

BAD_HORIZON = "horizon T must be an integer ≥ the burn-in τ = {burn_in}; got {horizon!r}; the violations are counted over [τ, T]"
NOT_ONE_GROUP = "the violation measures are for one group (domain [0, 1]); got domain {domain}; build the energy with the default domain"
BAD_GRID = "grid and terms must be integers ≥ 1; got grid = {grid!r}, terms = {terms!r}"


@dataclass(frozen=True)
class Violations:
    """`probability` = P(∃ t ∈ [τ, T]: F_t ∉ S) and `expected` = Σ_{t=τ..T} P(F_t ∉ S) (Def. 5.1), computed exactly;
    `interference` is the expected average interference over the first T decisions, (1/T) Σ_{t<T} E[κ(F_t)]."""

    probability: float
    expected: float
    interference: float
    horizon: int


def _check(energy: Energy, target: Target, horizon: int) -> None:
    if tuple(energy.domain) != ONE_GROUP:
        raise ShieldError(NOT_ONE_GROUP.format(domain=energy.domain))
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < target.burn_in:
        raise ShieldError(BAD_HORIZON.format(burn_in=target.burn_in, horizon=horizon))


NEGLIGIBLE = 1e-40
"""Probability mass below which a count is dropped from the band the dynamic programme carries: over T ≤ 10⁶ steps the
dropped mass changes no result in its first 20 digits, and the band of counts still alive is O(√t) wide instead of t."""


@dataclass
class _Progress:
    """The dynamic programme after step t: both measures over [τ, t] and the interference summed so far."""

    t: int
    probability: float
    expected: float
    flips: float


def _propagate(energy: Energy, p: float, target: Target, horizon: int) -> Iterator[_Progress]:
    """Forward dynamic programming on the count k of shielded 1s, one step at a time, over the band of counts whose
    probability is not negligible; yields the running measures after every step t = 1..T."""
    s_lo, s_hi = target.running
    # Row 0: the distribution of k; row 1: the same with violating mass removed (absorbed). Column j is count lo + j.
    mass = np.ones((2, 1))
    lo = 0
    progress = _Progress(0, 0.0, 0.0, 0.0)
    for t in range(horizon):
        counts = np.arange(lo, lo + mass.shape[1], dtype=float)
        g = np.full(mass.shape[1], p) if t == 0 else bias(energy, p, counts / t)
        progress.flips += float(mass[0] @ np.abs(g - p))  # κ(x) = |g(x) − p|: the chance that the next decision is flipped
        up = mass * g
        mass = np.concatenate((mass - up, np.zeros((2, 1))), axis=1)
        mass[:, 1:] += up
        if t + 1 >= target.burn_in:
            fairness = np.arange(lo, lo + mass.shape[1], dtype=float) / (t + 1)
            outside = (fairness < s_lo) | (fairness > s_hi)
            progress.expected += float(mass[0][outside].sum())
            progress.probability += float(mass[1][outside].sum())
            mass[1][outside] = 0.0
        alive = np.flatnonzero(mass[0] > NEGLIGIBLE)
        if alive.size and (alive[0] > 0 or alive[-1] < mass.shape[1] - 1):
            mass = mass[:, alive[0] : alive[-1] + 1]
            lo += int(alive[0])
        progress.t = t + 1
        yield progress


def violations(energy: Energy, p: float, target: Target, horizon: int) -> Violations:
    """Both violation measures over [τ, T] by forward dynamic programming on the count of shielded 1s.

    >>> from fairstream.shields.energy.functions import MonotoneEnergy
    >>> target = Target(50, (0.4, 0.6), (0.45, 0.55))
    >>> result = violations(MonotoneEnergy(0.3, target, alpha=1.0), 0.3, target, horizon=200)
    >>> 0 < result.probability < 1, result.probability <= result.expected
    (True, True)
    """
    _check(energy, target, horizon)
    (last,) = deque(_propagate(energy, p, target, horizon), maxlen=1)  # horizon ≥ τ ≥ 1: at least one step
    return Violations(float(min(last.probability, 1.0)), float(last.expected), last.flips / horizon, horizon)


def decides(energy: Energy, p: float, target: Target, horizon: int, lam: float, measure: str, check_every: int = 100) -> bool:
    """Whether measure[τ, T] + tail(T) ≤ λ, stopping as early as the answer is known: the measure over [τ, t] only
    grows with t, so once it exceeds λ the answer is no; and measure[τ, t] + tail(t) bounds measure[τ, ∞) from above,
    so once that is at most λ (checked every `check_every` steps and at T) the answer is yes. Both answers are those
    of the full computation at T, since measure[τ, T] + tail(T) ≤ measure[τ, t] + tail(t) for t ≤ T."""
    _check(energy, target, horizon)
    for progress in _propagate(energy, p, target, horizon):
        value = progress.probability if measure == "probability" else progress.expected
        if value > lam:
            return False
        if (progress.t % check_every == 0 or progress.t == horizon) and progress.t >= target.burn_in:
            if value + tail_bound(energy, p, target, progress.t) <= lam:
                return True
    return False


def _side_tail(eta: np.ndarray, delta: np.ndarray, jump: np.ndarray, horizon: int, terms: int) -> np.ndarray:
    """Σ_{t>T} Σ_{n≥1} exp(−2(tΔ − jump + nη)²/n) bounded in closed form, for each (η, Δ, jump) in the arrays.

    Times t ≤ T' = max(T, ⌈jump/Δ⌉) count 1 each; beyond T' the sum over t is at most the Gaussian integral
    √(πn/2)/(2Δ)·erfc(√(2/n)(a + nη)) with a = T'Δ − jump ≥ 0; the sum over n is exact up to `terms`, and the rest is
    bounded with erfc(z) ≤ exp(−z²) and √n·e^{−nη²} ≤ (2eη²)^{−1/2}.
    """
    start = np.maximum(horizon, np.ceil(jump / delta))
    a = start * delta - jump
    n = np.arange(1, terms + 1, dtype=float)[None, :]
    eta_, delta_, a_ = eta[:, None], delta[:, None], a[:, None]
    body = np.sqrt(np.pi * n / 2) / (2 * delta_) * special.erfc(np.sqrt(2 / n) * (a_ + n * eta_))
    rest = (
        np.sqrt(np.pi / 2) / (2 * delta) / np.sqrt(2 * np.e * eta**2) * np.exp(-4 * a * eta - (terms + 1) * eta**2) / -np.expm1(-(eta**2))
    )
    return (start - horizon) + body.sum(axis=1) + rest


def tail_bound(energy: Energy, p: float, target: Target, horizon: int, grid: int = 16, terms: int = 4096) -> float:
    """An upper bound on Σ_{t>T} P(F_t ∉ S): the expected number of violations after T, hence also on P(∃ t > T: F_t ∉ S).

    It needs only that g is non-increasing (shields.md A6, the computable replacement of Thm 5.2). For the upper side,
    any m ∈ (x*, s_hi) with η = m − g(m) > 0 and Δ = s_hi − m gives, for tΔ > 1 − m,
        P(F_t ≥ s_hi) ≤ Σ_{n=1}^{t−1} exp(−2(tΔ − (1 − m) + nη)²/n):
    W_t = t(F_t − m) drifts by at most −η while F > m, so a union over the last time F ≤ m and Azuma–Hoeffding apply.
    The lower side is the mirror image with (1 − m) replaced by m. Each side takes the best of `grid` values of m.
    The bound is infinite when x* is not strictly inside S, where violations recur forever.

    >>> from fairstream.shields.energy.functions import MonotoneEnergy
    >>> target = Target(50, (0.4, 0.6), (0.45, 0.55))
    >>> tail_bound(MonotoneEnergy(0.3, target, alpha=1.0), 0.3, target, horizon=1000) < 1e-6
    True
    """
    _check(energy, target, horizon)
    for value in (grid, terms):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ShieldError(BAD_GRID.format(grid=grid, terms=terms))
    s_lo, s_hi = target.running
    point = fixpoint(energy, p)
    if not s_lo < point < s_hi:
        return math.inf
    steps = np.arange(1, grid + 1) / (grid + 1)
    upper = point + (s_hi - point) * steps
    lower = s_lo + (point - s_lo) * steps
    above = _side_tail(upper - bias(energy, p, upper), s_hi - upper, 1 - upper, horizon, terms)
    below = _side_tail(bias(energy, p, lower) - lower, lower - s_lo, lower, horizon, terms)
    return float(above.min() + below.min())
