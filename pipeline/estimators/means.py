"""Real-valued outcomes per group: a running mean with bounds (delayed impact, ELF) and the long-term benefit rate (ELBERT)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from fairstream.records.errors import InsufficientData

Sides = Literal["both", "lower", "upper"]

NO_OUTCOMES = "no outcomes (n = {n}); the mean is undefined; wait until the group has closed trials"
TOO_FEW_FOR_T = "the t bounds need n ≥ 2 outcomes; got n = {n}; wait for more closed trials or use hoeffding_bounds"
NO_DEMAND = "no demand (D = {demand}); the benefit rate is undefined; wait until the group has demand"
BAD_ALPHA = "alpha must lie in (0, 1); got {alpha}; pass the error rate, e.g. 0.05"
BAD_SIDES = "sides must be 'both', 'lower' or 'upper'; got {sides!r}; 'lower' bounds the mean from below only"
BAD_RANGE = "the outcome range needs low < high; got low = {low}, high = {high}; pass the bounds every outcome lies in"
BAD_GAMMA = "gamma must lie in (0, 1]; got {gamma}; 1 keeps every tick at full weight"
TARGET_TRIALS = 1000
"""The number of trials an anytime (asymptotic) confidence sequence is tightest at."""


@dataclass
class Mean:
    """Weighted count `n`, `mean` and sum of squared deviations `m2` of real outcomes (Welford; Chan's merge).

    >>> outcomes = Mean()
    >>> for x in (1.0, 2.0, 6.0):
    ...     outcomes.update(x)
    >>> outcomes.get(), outcomes.m2
    (3.0, 14.0)
    """

    n: float = 0
    mean: float = 0.0
    m2: float = 0.0

    @classmethod
    def from_sums(cls, total: float, squares: float, n: float) -> Mean:
        """The mean of `n` outcomes from their sum and sum of squares (the monitor's per-group sums).

        >>> Mean.from_sums(9.0, 41.0, 3)
        Mean(n=3, mean=3.0, m2=14.0)
        """
        mean = total / n
        return cls(n, mean, max(0.0, squares - n * mean * mean))

    def update(self, x: float, w: float = 1) -> None:
        n = self.n + w
        if n == 0:
            self.n, self.mean, self.m2 = 0, 0.0, 0.0
            return
        delta = x - self.mean
        self.mean += delta * w / n
        self.m2 += w * delta * (x - self.mean)
        self.n = n

    def revert(self, x: float, w: float = 1) -> None:
        self.update(x, -w)

    def get(self) -> float:
        if self.n <= 0:
            raise InsufficientData(NO_OUTCOMES.format(n=self.n))
        return self.mean

    def __iadd__(self, other: Mean) -> Mean:
        n = self.n + other.n
        if n == 0:
            return self
        delta = other.mean - self.mean
        self.m2 += other.m2 + delta * delta * self.n * other.n / n
        self.mean += delta * other.n / n
        self.n = n
        return self


def _level(alpha: float, sides: Sides) -> float:
    """The error allowed in each bounded tail: α/2 for two-sided bounds, α for one-sided ones."""
    if not 0 < alpha < 1:
        raise ValueError(BAD_ALPHA.format(alpha=alpha))
    if sides not in ("both", "lower", "upper"):
        raise ValueError(BAD_SIDES.format(sides=sides))
    return alpha / 2 if sides == "both" else alpha


def student_t_bounds(mean: Mean, alpha: float, sides: Sides = "both") -> tuple[float, float]:
    """Student t bounds mean ± t_{1−α/2, n−1}·s/√n (t_{1−α, n−1} for one side; the other end is ±inf).

    Exact for normal outcomes, approximate otherwise (ELF's default for delayed impact).

    >>> outcomes = Mean()
    >>> for x in (1.0, 2.0, 6.0):
    ...     outcomes.update(x)
    >>> [round(bound, 3) for bound in student_t_bounds(outcomes, 0.05, sides="lower")]
    [-1.46, inf]
    """
    tail = _level(alpha, sides)
    if mean.n < 2:
        raise InsufficientData(TOO_FEW_FOR_T.format(n=mean.n))
    from scipy import stats

    half = float(stats.t.ppf(1 - tail, mean.n - 1)) * math.sqrt(mean.m2 / (mean.n - 1) / mean.n)
    return (-math.inf if sides == "upper" else mean.mean - half), (math.inf if sides == "lower" else mean.mean + half)


def hoeffding_bounds(mean: Mean, alpha: float, low: float, high: float, sides: Sides = "both") -> tuple[float, float]:
    """Hoeffding bounds mean ± (high − low)·sqrt(ln(2/α)/(2n)) for outcomes in [low, high] (ln(1/α) for one side),
    clipped to [low, high]. Valid for any distribution on that range, at one fixed n.

    >>> outcomes = Mean()
    >>> for x in (0.0, 1.0) * 50:
    ...     outcomes.update(x)
    >>> [round(bound, 4) for bound in hoeffding_bounds(outcomes, 0.05, low=0, high=1)]
    [0.3642, 0.6358]
    """
    tail = _level(alpha, sides)
    if not low < high:
        raise ValueError(BAD_RANGE.format(low=low, high=high))
    center = mean.get()
    half = (high - low) * math.sqrt(math.log(1 / tail) / (2 * mean.n))
    return (low if sides == "upper" else max(low, center - half)), (high if sides == "lower" else min(high, center + half))


def mean_bounds(
    mean: Mean, alpha: float, kind: Literal["student_t", "hoeffding"], outcome_range: tuple[float, float] | None, sides: Sides = "both"
) -> tuple[float, float]:
    """Bounds on a mean at level 1 − α by the spec's method: Student t, or Hoeffding over `outcome_range`."""
    if kind == "hoeffding":
        low, high = outcome_range  # type: ignore[misc]
        return hoeffding_bounds(mean, alpha, low, high, sides=sides)
    return student_t_bounds(mean, alpha, sides=sides)


@dataclass
class BenefitRate:
    """Long-term benefit rate of one group (ELBERT, Xu et al.): Σ_t γ^t S(t) / Σ_t γ^t D(t), discounted supply over
    discounted demand, a ratio of sums; t counts time steps from the start of the episode, so early steps weigh more.

    `next_step(γ)` ends a time step; γ = 1 gives the plain cumulative ratio. The example of the paper's Fig. 1: one
    applicant rejected at t = 0, a hundred accepted at t = 1, γ = 0.5:

    >>> benefit = BenefitRate()
    >>> benefit.update(supply=0, demand=1)
    >>> benefit.next_step(0.5)
    >>> benefit.update(supply=100, demand=100)
    >>> benefit.get() == 50 / 51
    True
    """

    supply: float = 0.0
    demand: float = 0.0
    weight: float = 1.0
    """γ^t of the current step."""

    def update(self, supply: float, demand: float) -> None:
        self.supply += self.weight * supply
        self.demand += self.weight * demand

    def next_step(self, gamma: float) -> None:
        if not 0 < gamma <= 1:
            raise ValueError(BAD_GAMMA.format(gamma=gamma))
        self.weight *= gamma

    def get(self) -> float:
        if self.demand <= 0:
            raise InsufficientData(NO_DEMAND.format(demand=self.demand))
        return self.supply / self.demand

    def __iadd__(self, other: BenefitRate) -> BenefitRate:
        self.supply += other.supply
        self.demand += other.demand
        return self


def normal_width(alpha: float) -> float:
    """z at 1 − α/2: the half-width of a two-sided interval at level 1 − α, in standard errors."""
    return NormalDist().inv_cdf(1 - alpha / 2)


def sequence_width(alpha: float, trials: int, target: int = TARGET_TRIALS) -> float:
    """The half-width, in standard errors, of a two-sided asymptotic confidence sequence at level 1 − α after `trials`
    (Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas, "Time-uniform central limit theory", AoS 2024, Thm 2.2): valid at
    every number of trials at once as the trials grow, tightest near `target`.

    >>> round(sequence_width(0.05, 1000), 2) > round(normal_width(0.05), 2)
    True
    """
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / target
    scaled = trials * rho2
    return math.sqrt(2 * (scaled + 1) / scaled * math.log(math.sqrt(scaled + 1) / alpha))
