"""Exact violation measures of the two-group energy shield over [τ, T], by forward dynamic programming over the counts
after t decisions, (seen_a, ones_a, ones_b), laid out as the FinHzn tables are (`states.layer`, `states.rank`).

Group a arrives with probability π, its raw decision is 1 with probability p_a (p_b for group b); the shield then moves
the decision as `GroupShield.decide` does, from the gap D before it. The states number about T⁴/24 over the horizon
(4.4 M at T = 100, 67 M at T = 200), so this is exact for horizons of a couple of hundred decisions: a reference for
bounds on longer horizons, and the measure itself for short ones.
"""

from __future__ import annotations

import numpy as np

from fairstream.shields.energy import states
from fairstream.shields.energy.drift import TWO_GROUPS
from fairstream.shields.energy.functions import Energy
from fairstream.shields.energy.placement import Placement
from fairstream.shields.energy.target import Target
from fairstream.shields.energy.violations import Violations
from fairstream.shields.errors import ShieldError

NOT_TWO_GROUPS = "the two-group measures need an energy on the domain [-1, 1]; got {domain}; build it with domain=(-1.0, 1.0)"
BAD_RATES = "p_a, p_b and the share π of group a must lie in [0, 1]; got p_a = {p_a!r}, p_b = {p_b!r}, π = {share!r}"
BAD_HORIZON = "horizon T must be an integer ≥ the burn-in τ = {burn_in}; got {horizon!r}"


def _gaps(t: int) -> tuple[np.ndarray, ...]:
    """The counts of layer t and their gap D = r_a − r_b, an empty group counting as rate 0 (as `GroupCounts.gap`)."""
    seen_a, ones_a, ones_b = states.layer(t)
    seen_b = t - seen_a
    rate_a = np.divide(ones_a, seen_a, out=np.zeros(len(seen_a)), where=seen_a > 0)
    rate_b = np.divide(ones_b, seen_b, out=np.zeros(len(seen_b)), where=seen_b > 0)
    return seen_a, ones_a, ones_b, rate_a - rate_b


def group_violations(energy: Energy, p_a: float, p_b: float, share_a: float, target: Target, horizon: int) -> Violations:
    """P(∃ t ∈ [τ, T]: D_t ∉ S), Σ_{t=τ..T} P(D_t ∉ S) and the expected share of decisions flipped over the first T,
    the flips placed as the shield places them (`Placement`: the smaller group's first where the shares are uneven).

    >>> from fairstream.shields.energy.functions import MonotoneEnergy
    >>> target = Target(10, (-0.2, 0.2), (-0.1, 0.1))
    >>> result = group_violations(MonotoneEnergy(0.3, target, 0.5, domain=(-1.0, 1.0)), 0.6, 0.3, 0.5, target, 30)
    >>> 0 < result.probability <= result.expected
    True
    """
    if tuple(energy.domain) != TWO_GROUPS:
        raise ShieldError(NOT_TWO_GROUPS.format(domain=energy.domain))
    if not all(0 <= value <= 1 for value in (p_a, p_b, share_a)):
        raise ShieldError(BAD_RATES.format(p_a=p_a, p_b=p_b, share=share_a))
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < target.burn_in:
        raise ShieldError(BAD_HORIZON.format(burn_in=target.burn_in, horizon=horizon))
    pivot, placement = energy.pivot, Placement.of(share_a, (p_a, p_b))
    mass = np.ones((2, 1))  # row 0: the distribution of the counts; row 1: the same with violating mass absorbed
    probability = expected = flips = 0.0
    layer = _gaps(0)
    for t in range(horizon):
        seen_a, ones_a, ones_b, gap = layer
        zeta = np.asarray(energy(gap), dtype=float)
        below, above = gap < pivot, gap > pivot
        zeta_a, zeta_b = placement.chances(zeta, below, np.bool_(True)), placement.chances(zeta, below, np.bool_(False))
        accept_a = np.where(below, p_a + (1 - p_a) * zeta_a, np.where(above, p_a * (1 - zeta_a), p_a))
        accept_b = np.where(below, p_b * (1 - zeta_b), np.where(above, p_b + (1 - p_b) * zeta_b, p_b))
        flip_a = np.where(below, (1 - p_a) * zeta_a, np.where(above, p_a * zeta_a, 0.0))
        flip_b = np.where(below, p_b * zeta_b, np.where(above, (1 - p_b) * zeta_b, 0.0))
        flips += float(mass[0] @ (share_a * flip_a + (1 - share_a) * flip_b))
        after = np.zeros((2, (t + 2) * (t + 3) * (t + 4) // 6))  # layer t + 1 has C(t + 4, 3) states
        for rank, weight in (
            (states.rank(t + 1, seen_a + 1, ones_a + 1, ones_b), share_a * accept_a),
            (states.rank(t + 1, seen_a + 1, ones_a, ones_b), share_a * (1 - accept_a)),
            (states.rank(t + 1, seen_a, ones_a, ones_b + 1), (1 - share_a) * accept_b),
            (states.rank(t + 1, seen_a, ones_a, ones_b), (1 - share_a) * (1 - accept_b)),
        ):
            after[:, rank] += mass * weight  # each move maps the layer one-to-one: no index repeats
        mass, layer = after, _gaps(t + 1)
        if t + 1 >= target.burn_in:
            outside = (layer[3] < target.running[0]) | (layer[3] > target.running[1])
            expected += float(mass[0][outside].sum())
            probability += float(mass[1][outside].sum())
            mass[1][outside] = 0.0
    return Violations(min(probability, 1.0), expected, flips / horizon, horizon)
