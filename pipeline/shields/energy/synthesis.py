"""Algorithm 1: the least steep member of a monotone family whose violation measure, plus the tail bound, is at most λ.

Steeper members never violate more (Thm 5.5), so bisection on α finds the smallest admissible index within `tol`.
Every member has its fixpoint in L, so limit fairness holds whichever member is chosen. Each candidate's dynamic
programme stops as soon as its answer is known (`decides`); only the chosen member is computed to the horizon.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from fairstream.shields.energy.drift import expected_interference
from fairstream.shields.energy.functions import STEEPNESS, MonotoneEnergy, MonotoneFamily
from fairstream.shields.energy.violations import Violations, decides, tail_bound, violations
from fairstream.shields.errors import ShieldError

Measure = Literal["probability", "expected"]

NONE_MEETS = (
    "no member of the family meets λ = {lam:g}; the steepest (α = {alpha:g}) gives {total:.4g} "
    "({value:.4g} over [τ, T] + tail {tail:.4g}); widen S or raise λ"
)
BAD_LAMBDA = "λ must be positive; got {lam!r}; it bounds the probability (or expected number) of violations after τ"
BAD_TOLERANCE = "tolerance must lie in (0, 1); got {tol!r}; e.g. 1e-3 finds α to three decimals"
BAD_MEASURE = "measure must be 'probability' or 'expected'; got {measure!r}"


@dataclass(frozen=True)
class Synthesis:
    """The chosen member and what it guarantees.

    `violation` is the exact measure over [τ, T] (P_viol or E_viol), `tail` the bound on Σ_{t>T} P(F_t ∉ S), so the
    measure over [τ, ∞) is at most `violation + tail`; `interference` is the long-run average interference |x* − p|,
    the same for every member, and `horizon_interference` the expected average over the first T decisions, where a
    steeper member pays more; `iterations` counts the bisection steps.
    """

    alpha: float
    energy: MonotoneEnergy
    violation: float
    tail: float
    interference: float
    horizon_interference: float
    iterations: int
    seconds: float
    horizon: int
    measure: Measure

    @property
    def bound(self) -> float:
        """The guaranteed bound on the violation measure over [τ, ∞)."""
        return self.violation + self.tail


@dataclass(frozen=True)
class _Assessment:
    energy: MonotoneEnergy
    exact: Violations
    value: float
    tail: float


def _assess(family: MonotoneFamily, alpha: float, horizon: int, measure: Measure) -> _Assessment:
    energy = family(alpha)
    exact = violations(energy, family.p, family.target, horizon)
    value = exact.probability if measure == "probability" else exact.expected
    return _Assessment(energy, exact, value, tail_bound(energy, family.p, family.target, horizon))


def synthesize(family: MonotoneFamily, lam: float, horizon: int, tol: float = 1e-3, measure: Measure = "probability") -> Synthesis:
    """Bisect α over [0, 1] for the least steep member with measure[τ, T] + tail(T) ≤ λ; the answer is within `tol` of the least.

    >>> from fairstream.shields.energy.target import Target
    >>> family = MonotoneFamily(0.3, Target(50, (0.4, 0.6), (0.45, 0.55)))
    >>> result = synthesize(family, lam=0.05, horizon=400, tol=0.01)
    >>> result.bound <= 0.05, round(result.interference, 6)
    (True, 0.15)
    """
    if not lam > 0:
        raise ShieldError(BAD_LAMBDA.format(lam=lam))
    if not 0 < tol < 1:
        raise ShieldError(BAD_TOLERANCE.format(tol=tol))
    if measure not in ("probability", "expected"):
        raise ShieldError(BAD_MEASURE.format(measure=measure))
    started = time.perf_counter()
    low, high = STEEPNESS
    if not decides(family(high), family.p, family.target, horizon, lam, measure):
        best = _assess(family, high, horizon, measure)
        raise ShieldError(NONE_MEETS.format(lam=lam, alpha=high, total=best.value + best.tail, value=best.value, tail=best.tail))
    iterations = 0
    while high - low > tol:
        iterations += 1
        middle = 0.5 * (low + high)
        if decides(family(middle), family.p, family.target, horizon, lam, measure):
            high = middle
        else:
            low = middle
    best = _assess(family, high, horizon, measure)
    interference = expected_interference(best.energy, family.p)
    seconds = time.perf_counter() - started
    return Synthesis(high, best.energy, best.value, best.tail, interference, best.exact.interference, iterations, seconds, horizon, measure)
