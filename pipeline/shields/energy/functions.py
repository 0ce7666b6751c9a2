"""Energy functions ζ (Def. 4.1): the flip probability as a function of the fairness value.

Each is zero and flat at its pivot c, non-increasing below c, non-decreasing above c and at most 1 on its domain
([0, 1] for one group, [−1, 1] for the gap of two groups), so it never needs clipping. Calling one on an array
evaluates it pointwise; the dynamic programme in `fairstream.shields.energy.violations` relies on that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike

from fairstream.shields.energy.drift import ONE_GROUP, Domain, required_energy
from fairstream.shields.energy.target import Target
from fairstream.shields.errors import ShieldError

STEEPNESS: tuple[float, float] = (0.0, 1.0)
"""Range of the index α of `MonotoneFamily`: α = 0 is its gentlest member, α = 1 its steepest."""

BAD_PIVOT = "pivot must lie in the domain {domain}; got {pivot:g}; put the pivot inside the range of the fairness value"
BAD_DOMAIN = "domain must be an interval (lo, hi) with lo < hi; got {domain}; use (0.0, 1.0) for one group, (-1.0, 1.0) for two"
BAD_EXPONENT = "exponent k must be an integer ≥ {least}; got {k!r}; use a whole number such as 2"
BAD_SCALE = "a must lie in [0, {most:.6g}] so that ζ ≤ 1 on {domain} without clipping; got a = {a:.6g}; lower a"
BAD_RATE = "b must be positive and b·{reach:g}² at most 700; got b = {b!r}; lower b or use a polynomial"
UNREACHABLE = (
    "ζ({point:g}) = {value:.6g} needs a = {a:.6g}, above the most ({most:.6g}) that keeps ζ ≤ 1 on {domain}; "
    "move the pivot further from {point:g} or make the function less steep"
)
BAD_VALUE = "the value at the point must lie in [0, 1]; got {value!r}; an energy is a probability"
BAD_P = "p must lie in the domain {domain}; got {p!r}; p is the raw acceptance rate (or the raw gap for two groups)"
BAD_ALPHA = "steepness α must lie in [0, 1]; got {alpha!r}; α = 0 is the gentlest member, α = 1 the steepest"
BAD_RUNNING = "running target S must lie inside the domain {domain}; got S = {running}; for the gap of two groups pass domain=(-1.0, 1.0)"
NOT_INSIDE = "the limit point x_L = {point:g} must lie strictly inside S = {running}; widen S or move L away from its edges"


class Energy(Protocol):
    """What a shield needs from an energy function: its pivot, its domain and its values."""

    pivot: float
    domain: Domain

    def __call__(self, x: ArrayLike) -> float | np.ndarray: ...


def _like(values: np.ndarray, x: ArrayLike) -> float | np.ndarray:
    return float(values) if np.ndim(x) == 0 else values


def _check_domain(pivot: float, domain: Domain) -> float:
    """Validate the domain and the pivot; return the reach max(c − lo, hi − c), the furthest distance from the pivot."""
    lo, hi = domain
    if not lo < hi:
        raise ShieldError(BAD_DOMAIN.format(domain=domain))
    if not lo <= pivot <= hi:
        raise ShieldError(BAD_PIVOT.format(domain=domain, pivot=pivot))
    return max(pivot - lo, hi - pivot)


def _check_exponent(k: object, least: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < least:
        raise ShieldError(BAD_EXPONENT.format(least=least, k=k))


def _check_value(value: float) -> None:
    if not 0 <= value <= 1:
        raise ShieldError(BAD_VALUE.format(value=value))


@dataclass(frozen=True)
class Polynomial:
    """Even polynomial ζ(x) = a (x − c)^{2k} with 0 ≤ a ≤ 1/reach^{2k}, reach = max(c − lo, hi − c) (Ex. 4.2).

    >>> zeta = Polynomial(a=4.0, k=1, pivot=0.5)
    >>> zeta(0.5), zeta(0.25), zeta(1.0)
    (0.0, 0.25, 1.0)
    """

    a: float
    k: int
    pivot: float
    domain: Domain = ONE_GROUP

    def __post_init__(self) -> None:
        _check_exponent(self.k, 1)
        most = self.most(self.k, self.pivot, self.domain)
        if not 0 <= self.a <= most * (1 + 1e-12):
            raise ShieldError(BAD_SCALE.format(most=most, domain=self.domain, a=self.a))

    @staticmethod
    def most(k: int, pivot: float, domain: Domain = ONE_GROUP) -> float:
        """The largest a that keeps ζ ≤ 1 on the domain."""
        return _check_domain(pivot, domain) ** (-2 * k)

    @classmethod
    def through(cls, point: float, value: float, k: int, pivot: float, domain: Domain = ONE_GROUP) -> Polynomial:
        """The member with ζ(point) = value, e.g. the value Eq. 8 requires at the limit point: a = value/|point − c|^{2k}.

        >>> zeta = Polynomial.through(0.45, 0.25, k=1, pivot=0.95)
        >>> round(zeta.a, 12), round(zeta(0.45), 12)
        (1.0, 0.25)
        """
        _check_value(value)
        _check_exponent(k, 1)
        most = cls.most(k, pivot, domain)
        distance = abs(point - pivot)
        a = value / distance ** (2 * k) if distance > 0 else (0.0 if value == 0 else math.inf)
        if a > most * (1 + 1e-12):
            raise ShieldError(UNREACHABLE.format(point=point, value=value, a=a, most=most, domain=domain))
        return cls(min(a, most), k, pivot, domain)

    def __call__(self, x: ArrayLike) -> float | np.ndarray:
        return _like(self.a * (np.asarray(x, dtype=float) - self.pivot) ** (2 * self.k), x)


@dataclass(frozen=True)
class Exponential:
    """ζ(x) = a (exp(b (x − c)²) − 1) with b > 0 and 0 ≤ a ≤ 1/(exp(b·reach²) − 1) (Ex. 4.2); larger b is steeper.

    >>> zeta = Exponential(a=Exponential.most(2.0, pivot=0.5), b=2.0, pivot=0.5)
    >>> zeta(0.5), round(zeta(0.0), 12)
    (0.0, 1.0)
    """

    a: float
    b: float
    pivot: float
    domain: Domain = ONE_GROUP

    def __post_init__(self) -> None:
        most = self.most(self.b, self.pivot, self.domain)
        if not 0 <= self.a <= most * (1 + 1e-12):
            raise ShieldError(BAD_SCALE.format(most=most, domain=self.domain, a=self.a))

    @staticmethod
    def most(b: float, pivot: float, domain: Domain = ONE_GROUP) -> float:
        """The largest a that keeps ζ ≤ 1 on the domain."""
        reach = _check_domain(pivot, domain)
        if not (0 < b and b * reach**2 <= 700):
            raise ShieldError(BAD_RATE.format(reach=reach, b=b))
        return 1 / math.expm1(b * reach**2)

    @classmethod
    def through(cls, point: float, value: float, b: float, pivot: float, domain: Domain = ONE_GROUP) -> Exponential:
        """The member with rate b and ζ(point) = value: a = value/(exp(b (point − c)²) − 1)."""
        _check_value(value)
        most = cls.most(b, pivot, domain)
        growth = math.expm1(b * (point - pivot) ** 2)
        a = value / growth if growth > 0 else (0.0 if value == 0 else math.inf)
        if a > most * (1 + 1e-12):
            raise ShieldError(UNREACHABLE.format(point=point, value=value, a=a, most=most, domain=domain))
        return cls(min(a, most), b, pivot, domain)

    def __call__(self, x: ArrayLike) -> float | np.ndarray:
        return _like(self.a * np.expm1(self.b * (np.asarray(x, dtype=float) - self.pivot) ** 2), x)


def _ramp(distance: np.ndarray, scale: float, k: int) -> np.ndarray:
    """min(1, (distance/scale)^k) for distance ≥ 0, and 0 below; a zero scale means the region is empty."""
    return np.minimum(1.0, (np.maximum(distance, 0.0) / (scale or 1.0)) ** k)


def _scalar_ramp(distance: float, scale: float, k: int) -> float:
    """`_ramp` for one float."""
    return min(1.0, (max(distance, 0.0) / (scale or 1.0)) ** k)


@dataclass(frozen=True)
class MonotoneEnergy:
    """Member α of the monotone family: F_t → x_L ∈ L for every α, and ζ_α(x) is non-decreasing in α at every x.

    Case p < l_lo (push up): x_L = l_lo, v = ζ(x_L) from Eq. 8, pivot c = s_hi, and
        x ≤ x_L:       ζ = v + α(1 − v)·min(1, ((x_L − x)/(x_L − s_lo))^k)
        x_L ≤ x ≤ c:   ζ = v·((c − x)/(c − x_L))^k                       (independent of α)
        x ≥ c:         ζ = α·min(1, ((x − c)/(hi − c))^k).
    Case p > l_hi is its mirror image (x_L = l_hi, c = s_lo). Case p ∈ L: c = x_L = p and ζ = α·min(1, (|x − c|/d)^k),
    d the distance from c to the edge of S on that side. α = 0 is the gentlest member that still reaches x_L.

    >>> zeta = MonotoneEnergy(0.3, Target(50, (0.4, 0.6), (0.45, 0.55)), alpha=0.5)
    >>> zeta.limit_point, zeta.pivot, round(zeta(0.45), 6), round(zeta(0.4), 6)
    (0.45, 0.6, 0.214286, 0.607143)
    """

    p: float
    target: Target
    alpha: float
    k: int = 2
    domain: Domain = ONE_GROUP
    limit_point: float = field(init=False)
    level: float = field(init=False)
    pivot: float = field(init=False)
    side: int = field(init=False)

    def __post_init__(self) -> None:
        lo, hi = self.domain
        if not lo < hi:
            raise ShieldError(BAD_DOMAIN.format(domain=self.domain))
        if not lo <= self.p <= hi:
            raise ShieldError(BAD_P.format(domain=self.domain, p=self.p))
        if not STEEPNESS[0] <= self.alpha <= STEEPNESS[1]:
            raise ShieldError(BAD_ALPHA.format(alpha=self.alpha))
        _check_exponent(self.k, 2)
        (s_lo, s_hi), (l_lo, l_hi) = self.target.running, self.target.limit
        if not lo <= s_lo < s_hi <= hi:
            raise ShieldError(BAD_RUNNING.format(running=self.target.running, domain=self.domain))
        side = 1 if self.p < l_lo else -1 if self.p > l_hi else 0
        point = {1: l_lo, -1: l_hi, 0: self.p}[side]
        pivot = {1: s_hi, -1: s_lo, 0: self.p}[side]
        if not s_lo < point < s_hi:
            raise ShieldError(NOT_INSIDE.format(point=point, running=self.target.running))
        object.__setattr__(self, "side", side)
        object.__setattr__(self, "limit_point", point)
        object.__setattr__(self, "pivot", pivot)
        object.__setattr__(self, "level", required_energy(self.p, point, pivot, self.domain))

    def __call__(self, x: ArrayLike) -> float | np.ndarray:
        if isinstance(x, float):
            return self._scalar(x)
        values = np.asarray(x, dtype=float)
        alpha, k, c = self.alpha, self.k, self.pivot
        (s_lo, s_hi), (lo, hi) = self.target.running, self.domain
        if self.side == 0:
            below = _ramp(c - values, c - s_lo, k)
            above = _ramp(values - c, s_hi - c, k)
            return _like(alpha * np.where(values < c, below, above), x)
        # Reflect the push-down case onto the push-up case: y = side·x, so "below x_L" is always the far side from the pivot.
        side, v = self.side, self.level
        y, point, c = side * values, side * self.limit_point, side * c
        far, edge = (s_lo, hi) if side == 1 else (-s_hi, -lo)
        outer = v + alpha * (1 - v) * _ramp(point - y, point - far, k)
        inner = v * ((c - y) / (c - point)) ** k
        beyond = alpha * _ramp(y - c, edge - c, k)
        return _like(np.where(y <= point, outer, np.where(y <= c, inner, beyond)), x)

    def _scalar(self, x: float) -> float:
        """The same function for one float without numpy: the shield calls it once per decision."""
        alpha, k, c = self.alpha, self.k, self.pivot
        (s_lo, s_hi), (lo, hi) = self.target.running, self.domain
        if self.side == 0:
            return alpha * (_scalar_ramp(c - x, c - s_lo, k) if x < c else _scalar_ramp(x - c, s_hi - c, k))
        side, v = self.side, self.level
        y, point, c = side * x, side * self.limit_point, side * c
        far, edge = (s_lo, hi) if side == 1 else (-s_hi, -lo)
        if y <= point:
            return v + alpha * (1 - v) * _scalar_ramp(point - y, point - far, k)
        if y <= c:
            return v * ((c - y) / (c - point)) ** k
        return alpha * _scalar_ramp(y - c, edge - c, k)


@dataclass(frozen=True)
class MonotoneFamily:
    """The family α ↦ `MonotoneEnergy(p, target, α, k, domain)` for α ∈ [0, 1], ordered pointwise by α (Def. 5.4).

    >>> family = MonotoneFamily(0.3, Target(50, (0.4, 0.6), (0.45, 0.55)))
    >>> family(0.2)(0.41) <= family(0.8)(0.41)
    True
    """

    p: float
    target: Target
    k: int = 2
    domain: Domain = ONE_GROUP

    def __post_init__(self) -> None:
        self(STEEPNESS[0])

    def __call__(self, alpha: float) -> MonotoneEnergy:
        return MonotoneEnergy(self.p, self.target, alpha, self.k, self.domain)
