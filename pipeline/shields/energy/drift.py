"""Mean-field drift of an energy shield: the bias g(x) of the next shielded decision, h(x) = g(x) − x, its fixpoint x*,
the energy that Eq. 8 requires at a chosen limit point, and the long-run interference.

With F_t the running fairness value, F_{t+1} = F_t + (h(F_t) + M_{t+1})/(t + 1) (Robbins–Monro), so F_t → x* almost surely.
On a domain [lo, hi] (one group: [0, 1]; two groups: [−1, 1]) the bias is
    g(x) = p + (hi − p) ζ(x)  if x < c,        g(x) = p − (p − lo) ζ(x)  if x ≥ c,
which is Eq. 2 for one group and Eq. 42 for the demographic-parity gap of two groups (p = p_a − p_b).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairstream.shields.errors import ShieldError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairstream.shields.energy.functions import Energy

Domain = tuple[float, float]
ONE_GROUP: Domain = (0.0, 1.0)
TWO_GROUPS: Domain = (-1.0, 1.0)

NOT_BETWEEN = (
    "the limit point must lie between p and the pivot; got p = {p:g}, point = {point:g}, pivot = {pivot:g}; "
    "put the pivot beyond the limit point, on the side away from p"
)
NOT_ONE_GROUP = (
    "expected interference |x* − p| is for one group (domain [0, 1]); got domain {domain}; use group_interference for two groups"
)
BAD_SHARE = "the share π of group a must lie in (0, 1) and p_a, p_b in [0, 1]; got π = {share:g}, p_a = {p_a:g}, p_b = {p_b:g}"


def _like(values: np.ndarray, x: ArrayLike) -> float | np.ndarray:
    return float(values) if np.ndim(x) == 0 else values


def bias(energy: Energy, p: float, x: ArrayLike) -> float | np.ndarray:
    """g(x): the probability that the next shielded decision is 1 (one group) or the expected gap step (two groups).

    >>> from fairstream.shields.energy.functions import Polynomial
    >>> round(bias(Polynomial(a=1.0, k=1, pivot=0.5), 0.3, 0.4), 4)
    0.307
    """
    lo, hi = energy.domain
    x = np.asarray(x, dtype=float)
    zeta = np.asarray(energy(x))
    return _like(np.where(x < energy.pivot, p + (hi - p) * zeta, p - (p - lo) * zeta), x)


def mean_field(energy: Energy, p: float, x: ArrayLike) -> float | np.ndarray:
    """h(x) = g(x) − x, the mean step of F_t (times t + 1): strictly decreasing, positive below the fixpoint, negative above."""
    return _like(np.asarray(bias(energy, p, x)) - np.asarray(x, dtype=float), x)


def fixpoint(energy: Energy, p: float, tol: float = 1e-12) -> float:
    """The unique x* with g(x*) = x*, by bisection on h (h(lo) ≥ 0 ≥ h(hi)); it lies between p and the pivot (Lemma 6.2).

    >>> from fairstream.shields.energy.functions import Polynomial
    >>> round(fixpoint(Polynomial.through(0.45, required_energy(0.3, 0.45, 0.9), k=1, pivot=0.9), 0.3), 9)
    0.45
    """
    lo, hi = energy.domain
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if mean_field(energy, p, mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def required_energy(p: float, point: float, pivot: float, domain: Domain = ONE_GROUP) -> float:
    """ζ(x_L) that makes x_L the limit of F_t (Eq. 8; Eq. 45 on [−1, 1]): it depends only on p and the side of the pivot.

    >>> round(required_energy(0.3, 0.45, pivot=0.6), 6)   # (0.45 − 0.3)/(1 − 0.3)
    0.214286
    >>> round(required_energy(0.6, 0.45, pivot=0.4), 6)  # (0.6 − 0.45)/0.6
    0.25
    """
    lo, hi = domain
    if p <= point < pivot:
        return (point - p) / (hi - p)
    if pivot < point <= p:
        return (p - point) / (p - lo)
    if point == p == pivot:
        return 0.0
    raise ShieldError(NOT_BETWEEN.format(p=p, point=point, pivot=pivot))


def expected_interference(energy: Energy, p: float) -> float:
    """Long-run average interference of the one-group shield: κ(x*) = (1 − p)ζ(x*) or pζ(x*), which equals |x* − p| (Lemma 6.4)."""
    if tuple(energy.domain) != ONE_GROUP:
        raise ShieldError(NOT_ONE_GROUP.format(domain=energy.domain))
    point = fixpoint(energy, p)
    zeta = float(energy(point))
    return (1 - p) * zeta if point < energy.pivot else p * zeta


def group_interference(energy: Energy, share: float, p_a: float, p_b: float) -> float:
    """Long-run interference of the two-group shield (Eq. 46) at the fixpoint of the gap; at most |x* − (p_a − p_b)| (Lemma A.10)."""
    if not (0 < share < 1 and 0 <= p_a <= 1 and 0 <= p_b <= 1):
        raise ShieldError(BAD_SHARE.format(share=share, p_a=p_a, p_b=p_b))
    point = fixpoint(energy, p_a - p_b)
    zeta = float(energy(point))
    if point < energy.pivot:
        return zeta * (share * (1 - p_a) + (1 - share) * p_b)
    return zeta * (share * p_a + (1 - share) * (1 - p_b))
