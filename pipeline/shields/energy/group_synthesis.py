"""Algorithm 1 for two groups: the least steep member of the monotone family whose violation measure over [τ, T] is at
most λ, for a decision maker with raw rates p_a, p_b and a share π of decisions about group a.

The measure over [τ, T] is computed exactly, by dynamic programming over both groups' counts, when T ≤ `EXACT_HORIZON`
(the states number about T⁴/24). Beyond that it is bounded from simulated streams: every candidate member is run on the
same `runs` streams, and a candidate passes when the one-sided Clopper–Pearson bound on P(∃ t ∈ [τ, T]: D_t ∉ S) (or a
Student-t bound on the expected number of such t) is at most λ. Each bound is taken at confidence 1 − δ/m, m the number
of members the bisection can evaluate, so with probability at least 1 − δ every evaluated member's bound holds at
once, the chosen one's included, however the streams steered the search (Bonferroni). No bound is claimed after T: a
provable tail for two groups (Thm 7.3 with Azuma's inequality) needs tens of thousands of decisions before it is small
for an S of width 0.2; instead the streams report how many first left S in the last half of [τ, T], which is 0 when
the horizon covers the time violations happen.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, TypeVar

import numpy as np
from scipy import stats

from fairstream.shields.energy.drift import TWO_GROUPS, group_interference
from fairstream.shields.energy.functions import STEEPNESS, MonotoneEnergy
from fairstream.shields.energy.group_simulation import GroupDraws, GroupProblem, group_runs
from fairstream.shields.energy.group_violations import group_violations
from fairstream.shields.errors import ShieldError

J = TypeVar("J")
"""A member's judgement, whatever a bisection compares."""

Measure = Literal["probability", "expected"]
Method = Literal["exact", "monte carlo"]

EXACT_HORIZON = 100
"""Horizons up to this many decisions are computed exactly (about 1 s a member at T = 100); longer ones are simulated."""

NONE_MEETS = (
    "no member of the family meets λ = {lam:g} over [τ, {horizon}]: the steepest (α = 1) only reaches a bound of {value:.4g} ({method}); "
    "raise the burn-in, widen S or raise λ"
)
BAD_LAMBDA = "λ must lie in (0, 1) for the probability measure and be positive for the expected one; got {lam!r}"
BAD_TOLERANCE = "tolerance must lie in (0, 1); got {tol!r}; e.g. 0.01 finds α to two decimals"
BAD_CONFIDENCE = "confidence must lie in (0, 1); got {confidence!r}; e.g. 0.99"
BAD_RUNS = "runs must be an integer ≥ 100; got {runs!r}; the bound of fewer streams is too wide to certify anything"
BAD_HORIZON = "horizon T must be an integer ≥ the burn-in τ = {burn_in}; got {horizon!r}"


@dataclass(frozen=True)
class Assessment:
    """One member's violation measures over [τ, T]: estimates, and the bounds the synthesis judges by.

    Exact assessments have estimate = bound; simulated ones carry `runs` streams and the count `late` of those that first
    left S in the last half of [τ, T].
    """

    alpha: float
    probability: float
    probability_bound: float
    expected: float
    expected_bound: float
    interference: float
    runs: int | None
    late: int | None

    def bound(self, measure: Measure) -> float:
        return self.probability_bound if measure == "probability" else self.expected_bound

    def estimate(self, measure: Measure) -> float:
        return self.probability if measure == "probability" else self.expected


@dataclass(frozen=True)
class GroupSynthesis:
    """The chosen member, its assessment, and how it was found.

    `confidence` is the joint confidence of the simulated bounds (None when exact); `limit_interference` is the long-run
    share of decisions flipped (Eq. 46), `assessment.interference` the mean share over the first T.
    """

    energy: MonotoneEnergy
    assessment: Assessment
    problem: GroupProblem
    lam: float
    horizon: int
    measure: Measure
    method: Method
    confidence: float | None
    limit_interference: float
    evaluated: int
    seconds: float

    @property
    def alpha(self) -> float:
        return self.energy.alpha

    @property
    def bound(self) -> float:
        """The bound on the chosen measure over [τ, T] that the member was certified by."""
        return self.assessment.bound(self.measure)


def clopper_pearson_upper(hits: int, runs: int, delta: float) -> float:
    """The one-sided 1 − δ upper confidence bound on a binomial probability (exact, Clopper–Pearson)."""
    return 1.0 if hits == runs else float(stats.beta.ppf(1 - delta, hits + 1, runs - hits))


def _mean_upper(values: np.ndarray, delta: float) -> float:
    """The one-sided 1 − δ Student-t upper bound on a mean (a normal approximation: the counts have a finite range)."""
    spread = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    return float(values.mean()) + float(stats.t.ppf(1 - delta, len(values) - 1)) * spread / math.sqrt(len(values))


def simulated(
    energy: MonotoneEnergy, problem: GroupProblem, horizon: int, runs: int, seed: int, delta: float, draws: GroupDraws | None = None, beyond: float | None = None
) -> Assessment:
    """A member's measures over [τ, T] from `runs` simulated streams (`draws`, where they were drawn before), with 1 − δ
    upper bounds. With `beyond`, the streams stop once the probability bound exceeds it, as it then does at T too (the
    streams that have left S only grow in number); the measures are then those of the streams so far."""

    def bound_passed(first_violation: np.ndarray) -> bool:
        return clopper_pearson_upper(int(np.count_nonzero(first_violation)), runs, delta) > beyond  # type: ignore[operator]

    streams = group_runs(energy, problem, runs, horizon, seed, draws, bound_passed if beyond is not None else None)
    hits = int(streams.violated.sum())
    halfway = problem.target.burn_in + (horizon - problem.target.burn_in) // 2
    return Assessment(
        energy.alpha,
        hits / runs,
        clopper_pearson_upper(hits, runs, delta),
        float(streams.violations.mean()),
        _mean_upper(streams.violations.astype(float), delta),
        float(streams.flips.mean()) / horizon,
        runs,
        int((streams.first_violation > halfway).sum()),
    )


def exact(energy: MonotoneEnergy, problem: GroupProblem, horizon: int) -> Assessment:
    """A member's measures over [τ, T] by dynamic programming over both groups' counts."""
    result = group_violations(energy, problem.p_a, problem.p_b, problem.share, problem.target, horizon)
    return Assessment(energy.alpha, result.probability, result.probability, result.expected, result.expected, result.interference, None, None)


def _check_search(lam: float, tol: float, measure: Measure) -> None:
    if not (lam > 0 and (measure == "expected" or lam < 1)):
        raise ShieldError(BAD_LAMBDA.format(lam=lam))
    if not 0 < tol < 1:
        raise ShieldError(BAD_TOLERANCE.format(tol=tol))


def _check_assessment(confidence: float, runs: int, horizon: int, problem: GroupProblem) -> None:
    if not 0 < confidence < 1:
        raise ShieldError(BAD_CONFIDENCE.format(confidence=confidence))
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 100:
        raise ShieldError(BAD_RUNS.format(runs=runs))
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < problem.target.burn_in:
        raise ShieldError(BAD_HORIZON.format(burn_in=problem.target.burn_in, horizon=horizon))


def member(problem: GroupProblem, alpha: float, settle_margin: float, k: int = 2) -> MonotoneEnergy:
    """Member α of the two-group family for the problem's raw gap, its limit point `settle_margin` inside L."""
    return MonotoneEnergy(problem.raw_gap, problem.target.settled(settle_margin), alpha, k, domain=TWO_GROUPS)


def method_for(problem: GroupProblem, horizon: int) -> Method:
    """Exact dynamic programming for short horizons with outcomes known at once; simulation otherwise."""
    return "exact" if horizon <= EXACT_HORIZON and problem.delay == 0 else "monte carlo"


def least_steep(judge: Callable[[float], J], meets: Callable[[J], bool], tol: float) -> tuple[float | None, J]:
    """Bisect α over [0, 1] for the least steep member whose judgement meets the bound, to within `tol`: (α, its
    judgement), or (None, the steepest's judgement) when even the steepest (α = 1) does not meet it."""
    best = judge(STEEPNESS[1])
    if not meets(best):
        return None, best
    low, high = STEEPNESS
    while high - low > tol:
        middle = 0.5 * (low + high)
        trial = judge(middle)
        if meets(trial):
            high, best = middle, trial
        else:
            low = middle
    return high, best


def candidates(tol: float) -> int:
    """How many members the bisection evaluates: the steepest, then one per halving of [0, 1] down to `tol`."""
    return 1 + max(0, math.ceil(math.log2((STEEPNESS[1] - STEEPNESS[0]) / tol)))


def _measure(
    energy: MonotoneEnergy,
    problem: GroupProblem,
    horizon: int,
    runs: int,
    seed: int,
    delta: float,
    draws: GroupDraws | None = None,
    beyond: float | None = None,
) -> tuple[Assessment, Method]:
    """Exactly when T ≤ `EXACT_HORIZON` and outcomes are known at once, else from `runs` streams with 1 − δ bounds (see
    `simulated` for `beyond`)."""
    if method_for(problem, horizon) == "exact":
        return exact(energy, problem, horizon), "exact"
    return simulated(energy, problem, horizon, runs, seed, delta, draws, beyond), "monte carlo"


def assess(
    problem: GroupProblem, alpha: float, horizon: int, *, settle_margin: float = 0.01, runs: int = 4000, confidence: float = 0.99, seed: int = 0
) -> tuple[Assessment, Method]:
    """One member's measures over [τ, T] (a steepness set by hand): exact, or simulated with bounds at `confidence`."""
    _check_assessment(confidence, runs, horizon, problem)
    return _measure(member(problem, alpha, settle_margin), problem, horizon, runs, seed, 1 - confidence)


def synthesize_groups(
    problem: GroupProblem,
    lam: float,
    horizon: int,
    *,
    measure: Measure = "probability",
    settle_margin: float = 0.01,
    tol: float = 0.01,
    runs: int = 4000,
    confidence: float = 0.99,
    seed: int = 0,
) -> GroupSynthesis:
    """Bisect α over [0, 1] for the least steep member whose bound on the measure over [τ, T] is at most λ.

    >>> from fairstream.shields.energy.target import Target
    >>> problem = GroupProblem(0.6, 0.3, 0.5, Target(100, (-0.15, 0.15), (-0.05, 0.05)))
    >>> result = synthesize_groups(problem, lam=0.1, horizon=600, runs=1000, tol=0.1)
    >>> result.method, result.bound <= 0.1, 0 < result.alpha < 1
    ('monte carlo', True, True)
    """
    _check_search(lam, tol, measure)
    _check_assessment(confidence, runs, horizon, problem)
    started = time.perf_counter()
    evaluated = candidates(tol)
    delta = (1 - confidence) / evaluated
    draws = GroupDraws(problem, runs, horizon, seed).hold() if method_for(problem, horizon) == "monte carlo" else None  # every member on the same streams

    give_up = lam if measure == "probability" else None  # a member below the steepest whose bound has passed λ fails: its streams stop there
    method = method_for(problem, horizon)

    def judge(alpha: float) -> Assessment:
        beyond = give_up if alpha < STEEPNESS[1] else None
        return _measure(member(problem, alpha, settle_margin), problem, horizon, runs, seed, delta, draws, beyond)[0]

    alpha, best = least_steep(judge, lambda found: found.bound(measure) <= lam, tol)
    if alpha is None:
        raise ShieldError(NONE_MEETS.format(lam=lam, horizon=horizon, value=best.bound(measure), method=method))
    energy = member(problem, alpha, settle_margin)
    return GroupSynthesis(
        energy=energy,
        assessment=best,
        problem=problem,
        lam=lam,
        horizon=horizon,
        measure=measure,
        method=method,
        confidence=None if method == "exact" else confidence,
        limit_interference=group_interference(energy, problem.share, problem.p_a, problem.p_b),
        evaluated=evaluated,
        seconds=time.perf_counter() - started,
    )


@lru_cache(maxsize=16)
def cached_synthesis(problem: GroupProblem, lam: float, horizon: int, measure: Measure, settle_margin: float, confidence: float) -> GroupSynthesis:
    """`synthesize_groups` with the defaults, once per process for the same problem: the shield on the decision path and
    the command that starts it ask for the same member, and the answer is fixed by its seed."""
    return synthesize_groups(problem, lam, horizon, measure=measure, settle_margin=settle_margin, confidence=confidence)
