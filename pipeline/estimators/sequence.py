"""Anytime-valid bounds on the mean of bounded outcomes: a confidence sequence by betting (Waudby-Smith & Ramdas,
"Estimating means of bounded random variables by betting", JRSS-B 2024; hedged capital, predictable plug-in bets).

For every candidate mean m on a grid over the outcome range (rescaled to [0, 1]), one bettor stakes λ_t(m) ≥ 0 on
the outcome exceeding m: K⁺_t(m) = Π (1 + λ_i(m)(x_i − m)); a mirror bettor stakes on it falling short. If the true
mean is m, each capital is a nonnegative martingale and, by Ville's inequality, P(∃t: K_t(m) ≥ 1/α) ≤ α. So the means
no bettor has ever brought to 1/α form a 1 − α confidence sequence: its bounds hold at every t at once, however often
they are read. K⁺ falls as m rises, so the means rejected from below are an interval [0, r]: the lower bound is the
largest rejected grid point (on the grid, a little conservative), and it never decreases; likewise the upper bound.

The bet λ_t = √(2 ln(1/α) / (σ̂²_{t−1} t ln(1 + t))) depends only on earlier outcomes (μ̂ and σ̂² are the running
mean and variance, started at 1/2 and 1/4), capped at `CAP`/m (or `CAP`/(1 − m)) so every factor stays positive.
The functions work on arrays with any leading axes, one independent sequence per index, as the studies use them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

GRID = 1001
"""Candidate means over the outcome range: bounds are resolved to a thousandth of the range."""
CAP = 0.5
"""Largest stake relative to the room left: every factor stays ≥ 1 − CAP."""
BETS_ALPHA = 0.05
"""The level the bets are tuned for; the bounds are valid at every level, only a little looser away from it."""

BAD_RANGE = "the outcome range needs low < high; got [{low}, {high}]; set estimator.outcome_range to the bounds every outcome lies in"


@dataclass
class SequenceState:
    """Log-capital of the upward and downward bettors per grid mean (the running maximum kept), with the plug-in
    mean and variance; leading axes index independent sequences."""

    peak_up: np.ndarray
    peak_down: np.ndarray
    log_up: np.ndarray
    log_down: np.ndarray
    count: np.ndarray
    total: np.ndarray
    spread: np.ndarray
    """1/4 plus the squared deviations from the running mean so far: σ̂²_t = spread / (t + 1)."""


def start(shape: tuple[int, ...] = (), grid: int = GRID) -> SequenceState:
    """Fresh sequences: capital 1 everywhere, μ̂ = 1/2, σ̂² = 1/4."""
    zeros = np.zeros((*shape, grid))
    return SequenceState(zeros.copy(), zeros.copy(), zeros.copy(), zeros.copy(), np.zeros(shape), np.zeros(shape), np.full(shape, 0.25))


def means(grid: int = GRID) -> np.ndarray:
    return np.linspace(0.0, 1.0, grid)


def step(state: SequenceState, outcome: np.ndarray | float, grid_means: np.ndarray) -> None:
    """Settle every bet on one more outcome in [0, 1] per sequence, then update the plug-in estimates."""
    outcome = np.asarray(outcome, dtype=float)
    t = state.count + 1
    variance = state.spread / t  # σ̂²_{t−1} = spread / t
    stake = np.sqrt(2 * math.log(1 / BETS_ALPHA) / (variance * t * np.log1p(t)))[..., None]
    with np.errstate(divide="ignore"):
        up = np.minimum(stake, CAP / grid_means)
        down = np.minimum(stake, CAP / (1 - grid_means))
    payoff = outcome[..., None] - grid_means
    state.log_up += np.log1p(up * payoff)
    state.log_down += np.log1p(-down * payoff)
    np.maximum(state.peak_up, state.log_up, out=state.peak_up)
    np.maximum(state.peak_down, state.log_down, out=state.peak_down)
    state.count = t
    state.total = state.total + outcome
    mean = (0.5 + state.total) / (t + 1)
    state.spread = state.spread + (outcome - mean) ** 2


def lower(state: SequenceState, alpha: float, grid_means: np.ndarray) -> np.ndarray:
    """The 1 − α lower confidence sequence in [0, 1] (0 until a bettor has rejected some mean)."""
    rejected = state.peak_up >= math.log(1 / alpha)
    last = rejected.shape[-1] - 1 - np.argmax(rejected[..., ::-1], axis=-1)
    return np.where(rejected.any(axis=-1), grid_means[last], 0.0)


def upper(state: SequenceState, alpha: float, grid_means: np.ndarray) -> np.ndarray:
    """The 1 − α upper confidence sequence in [0, 1] (1 until a bettor has rejected some mean)."""
    rejected = state.peak_down >= math.log(1 / alpha)
    first = np.argmax(rejected, axis=-1)
    return np.where(rejected.any(axis=-1), grid_means[first], 1.0)


def rescale(outcome: float, low: float, high: float) -> float:
    """An outcome of the range [low, high] on [0, 1]; one outside the range counts as the nearest end (the range is
    the spec's promise, and a bet needs bounded outcomes)."""
    return min(1.0, max(0.0, (outcome - low) / (high - low)))


@dataclass
class MeanSequence:
    """One group's anytime-valid bounds on its mean outcome in [low, high].

    >>> sequence = MeanSequence(0.0, 1.0)
    >>> for x in [0.9, 0.8, 1.0, 0.7] * 50:
    ...     sequence.update(x)
    >>> low, high = sequence.bounds(0.05)
    >>> 0.75 < low < 0.85 < high < 0.95, sequence.count
    (True, 200)
    """

    low: float
    high: float
    state: SequenceState = field(default_factory=start)

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(BAD_RANGE.format(low=self.low, high=self.high))

    @property
    def count(self) -> int:
        return int(self.state.count)

    def update(self, outcome: float) -> None:
        """One more outcome in [low, high] (see `rescale`)."""
        step(self.state, rescale(outcome, self.low, self.high), _GRID_MEANS)

    def bounds(self, alpha: float) -> tuple[float, float]:
        """Lower and upper bound, each at level 1 − α, valid at every time at once."""
        width = self.high - self.low
        return self.low + width * float(lower(self.state, alpha, _GRID_MEANS)), self.low + width * float(upper(self.state, alpha, _GRID_MEANS))


_GRID_MEANS = means()


PLUG_IN_ALPHA = 0.05
"""The level the plug-in bets of `RateSequence` are tuned for; its bounds hold at every level, a little looser away."""
PLUG_IN_CAP = 0.5
"""Largest plug-in bet λ of `RateSequence`: ψ(λ) stays finite and the bounds stable."""


class RateSequence:
    """Anytime-valid bounds on the mean of outcomes in [0, 1] with constant memory: the predictable plug-in
    empirical-Bernstein confidence sequence (Waudby-Smith & Ramdas 2024, Theorem 2). After t outcomes,

        λ_i = min(√(2 ln(2/α₀) / (σ̂²_{i−1} · i · ln(1 + i))), 1/2),  v_i = 4 (x_i − μ̂_{i−1})²,  ψ(λ) = (−ln(1 − λ) − λ)/4,
        C_t = Σλ_i x_i / Σλ_i ± (ln(2/α) + Σ v_i ψ(λ_i)) / Σλ_i,

    with μ̂ and σ̂² the running mean and variance started at 1/2 and 1/4: P(∃t: μ ∉ C_t) ≤ α, however often read.
    The bets depend on earlier outcomes only, so `bounds` may be asked at any α. Six numbers of state, so a monitor can
    keep one per group and per pair of groups.

    >>> sequence = RateSequence()
    >>> for x in [1.0, 0.0, 0.0, 1.0, 0.0] * 200:
    ...     sequence.update(x)
    >>> low, high = sequence.bounds(0.05)
    >>> round(low, 3), round(high, 3), sequence.count
    (0.339, 0.462, 1000)
    """

    __slots__ = ("count", "_total", "_spread", "_bets", "_weighted", "_penalty")

    def __init__(self) -> None:
        self.count = 0
        self._total = 0.0
        self._spread = 0.25
        """1/4 plus the squared deviations from the running mean so far: σ̂²_t = spread / (t + 1)."""
        self._bets = 0.0
        self._weighted = 0.0
        self._penalty = 0.0

    def update(self, outcome: float) -> None:
        """One more outcome in [0, 1]."""
        t = self.count + 1
        mean_before = (0.5 + self._total) / t
        variance_before = self._spread / t
        bet = min(math.sqrt(2 * math.log(2 / PLUG_IN_ALPHA) / (variance_before * t * math.log1p(t))), PLUG_IN_CAP)
        self._bets += bet
        self._weighted += bet * outcome
        self._penalty += 4 * (outcome - mean_before) ** 2 * (-math.log1p(-bet) - bet) / 4
        self.count = t
        self._total += outcome
        self._spread += (outcome - (0.5 + self._total) / (t + 1)) ** 2

    @property
    def total(self) -> float:
        """The sum of the outcomes so far (for 0/1 outcomes, the hits)."""
        return self._total

    def bounds(self, alpha: float) -> tuple[float, float]:
        """Lower and upper bound in [0, 1], together at level 1 − α at every time at once ((0, 1) before any outcome)."""
        if self._bets <= 0:
            return 0.0, 1.0
        centre = self._weighted / self._bets
        margin = (math.log(2 / alpha) + self._penalty) / self._bets
        return max(0.0, centre - margin), min(1.0, centre + margin)
