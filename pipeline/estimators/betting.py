"""Anytime-valid tests that two groups' rates differ by more than ε, or by less, by betting (Waudby-Smith & Ramdas;
Chugg et al. 2023).

Outcomes are paired: one outcome x of group a meets y, the mean of the next r outcomes of group b (or the other way
round when b is the smaller group). A bettor starts with wealth 1 and stakes a fraction λ_k, fixed before pair k
arrives, on x − y exceeding ε: K_n = Π (1 + λ_k (x_k − y_k − ε)). If E[x − y] ≤ ε (H0⁺), K is a nonnegative
supermartingale and, by Ville's inequality, P(∃n: K_n ≥ 1/α) ≤ α: the test may be read after every pair, forever,
without inflating false alarms. A mirror bettor tests H0⁻: E[y − x] ≤ ε. Two more bettors stake on the gap staying
inside: on ε − (x − y) against p_a − p_b ≥ ε and on ε + (x − y) against p_b − p_a ≥ ε; when both have reached 1/α,
|p_a − p_b| < ε is *certified* at level α (each one-sided null rejected at α, an intersection–union test).

Why pairing keeps pairs independent: `RatioPairs` decides which outcomes meet from the order in which they are handed
to it within each group and from how many of each group it has been handed and left waiting (r is about the ratio of
those counts), never from the values. The monitor hands them over in the order their trials *opened* (see
`fairstream.estimators.opening`), which an outcome decided later cannot change; so if each group's outcomes are
i.i.d., every outcome in a pair is a fresh draw, independent of the other group and of every earlier pair, and
E[x − y] = p_a − p_b, which is all the supermartingale argument needs, however late and in whatever order the labels
arrive. Averaging r outcomes of the larger group uses every trial of both groups, so an unequal split costs what it
costs a fixed-sample z test: the pair's variance is σ_a² + σ_b²/r.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

ONS_GAIN = 2 / (2 - math.log(3))
"""Step size c of the online Newton step bets (Cutkosky & Orabona), as in Chugg et al."""
BET_CAP = 0.6
"""Largest bet λ where the payoff cannot fall far below zero: high enough that a large gap is found about as soon as
a fixed-sample test would find it, low enough that noise in the first pairs does not cost a small gap much."""
LEAST_FACTOR = 0.25
"""Every factor 1 + λ·payoff stays at least this: λ ≤ (1 − LEAST_FACTOR)/L for a payoff that can fall to −L."""


def bet_cap(worst_loss: float) -> float:
    """The largest bet on a payoff that can fall to −`worst_loss` (1 + ε for a violation side, 1 − ε for a
    certification side)."""
    return min(BET_CAP, (1 - LEAST_FACTOR) / worst_loss)


BAD_EPSILON = "epsilon must lie in [0, 1); got {epsilon}; the gap of two rates lies in [-1, 1]"
BAD_OUTCOME = "outcomes must lie in [0, 1]; got x = {x}, y = {y}; pass 0/1 indicators or rescale bounded outcomes"
BAD_RATIO = "the ratio threshold τ must lie in (0, 1]; got {threshold}; the four-fifths rule is 0.8"
BAD_ALPHA = "alpha must lie in (0, 1); got {alpha}; pass the false-alarm rate, e.g. 0.05"


def ons_step(bet, sum_z2, payoff, cap):
    """Log-factor of `payoff` (x − y − ε) at the current bet, and the next bet by online Newton step, at most `cap`
    (floats or arrays)."""
    factor = 1 + bet * payoff
    z = payoff / factor
    sum_z2 = sum_z2 + z * z
    return np.log(factor), np.minimum(np.maximum(bet + ONS_GAIN * z / sum_z2, 0.0), cap), sum_z2


def log_wealth_paths(payoffs: np.ndarray, cap: float = BET_CAP) -> np.ndarray:
    """Log-wealth after each payoff (x_k − y_k − ε, or ε ∓ (x_k − y_k)) of online-Newton-step bettors whose bets are
    at most `cap` (see `bet_cap`): time on the last axis, one independent bettor per index of the leading axes.
    `GapBet` makes the same bets one pair at a time.

    >>> log_wealth_paths(np.array([0.5, 0.5, -0.5])).round(4)
    array([ 0.    ,  0.2624, -0.0943])
    """
    payoffs = np.asarray(payoffs, dtype=float)
    bet, sum_z2, log_wealth = np.zeros(payoffs.shape[:-1]), np.ones(payoffs.shape[:-1]), np.zeros(payoffs.shape[:-1])
    paths = np.empty_like(payoffs)
    for k in range(payoffs.shape[-1]):
        log_factor, bet, sum_z2 = ons_step(bet, sum_z2, payoffs[..., k], cap)
        log_wealth = log_wealth + log_factor
        paths[..., k] = log_wealth
    return paths


class Bettors:
    """Online-Newton-step bettors on one pair of groups, each staking on a payoff a·x + b·y + c of the pair's outcomes
    whose mean is at most 0 under the null it tests; the running maximum of each log-wealth is kept, since Ville's
    inequality bounds it and a crossing stands once made."""

    __slots__ = ("pairs", "_coefficients", "_cap", "_bet", "_sum_z2", "_log_wealth", "_peak", "_index")

    def __init__(self, coefficients: np.ndarray, worst_losses: np.ndarray, index: tuple[int, int, int, int] = (0, 1, 2, 3)):
        self._index = index
        """The verdicts' bettors: against a exceeding b by at most the threshold, against b exceeding a by at most it
        (violations); against the property holding, one for each side (certification)."""
        self.pairs = 0
        self._coefficients = coefficients
        """One row (a, b, c) per bettor."""
        self._cap = np.minimum(BET_CAP, (1 - LEAST_FACTOR) / np.maximum(worst_losses, 1e-12))
        count = len(coefficients)
        self._bet, self._sum_z2, self._log_wealth, self._peak = np.zeros(count), np.ones(count), np.zeros(count), np.zeros(count)

    def update(self, x: float, y: float) -> None:
        """Settle every bet on one pair (x of group a, y of group b), then place the next."""
        if not (0 <= x <= 1 and 0 <= y <= 1):
            raise ValueError(BAD_OUTCOME.format(x=x, y=y))
        payoffs = self._coefficients @ np.array([x, y, 1.0])
        log_factor, self._bet, self._sum_z2 = ons_step(self._bet, self._sum_z2, payoffs, self._cap)
        self._log_wealth += log_factor
        np.maximum(self._peak, self._log_wealth, out=self._peak)
        self.pairs += 1

    def violation_rows(self) -> np.ndarray:
        """The payoff rows (a, b, c) of the two violation bettors, a ahead of b and b ahead of a."""
        return self._coefficients[list(self._index[:2])]

    def get(self) -> tuple[float, float]:
        """Current log-wealth of the two violation bettors (against a ahead of b, and b ahead of a, beyond the threshold)."""
        return float(self._log_wealth[self._index[0]]), float(self._log_wealth[self._index[1]])

    def _band(self, candidates: np.ndarray, alpha: float, floor: float, ceiling: float) -> tuple[float, float]:
        """The confidence sequence of a grid of `candidates` (ascending) whose first bettors test each as an upper limit
        and whose others test it as a lower one: the highest candidate with it and all below rejected from below, the
        lowest with it and all above rejected from above (`floor` and `ceiling` where none is), at 2/α a side."""
        _check_alpha(alpha)
        size, level = len(candidates), math.log(2 / alpha)
        rejected_below = self._peak[:size] >= level
        rejected_above = self._peak[size:] >= level
        lower = int(np.argmin(rejected_below)) if not rejected_below.all() else size
        upper = size - 1 - int(np.argmin(rejected_above[::-1])) if not rejected_above.all() else -1
        return float(candidates[lower - 1]) if lower else floor, float(candidates[upper + 1]) if upper < size - 1 else ceiling

    def certification(self) -> float:
        """The evidence that the property holds: the smaller of the highest log-wealths its two bettors have reached."""
        return float(min(self._peak[self._index[2]], self._peak[self._index[3]]))

    def rejects(self, alpha: float) -> Literal["a>b", "b>a"] | None:
        """The side whose wealth has reached 2/α at some pair so far (the higher one if both have), else None.

        Each side is tested at α/2, so P(ever rejects | the property holds) ≤ α however often this is called; to cover
        several pairs of groups, pass each its share of α (see `fairstream.verdicts.budget`).
        """
        _check_alpha(alpha)
        above, below = self._peak[self._index[0]], self._peak[self._index[1]]
        if max(above, below) < math.log(2 / alpha):
            return None
        return "a>b" if above >= below else "b>a"

    def certifies(self, alpha: float) -> bool:
        """Whether both bettors on the property holding have reached 1/α at some pair so far: each one-sided null is then
        rejected at α, so P(ever certifies | the property is violated) ≤ α."""
        _check_alpha(alpha)
        return self.certification() >= math.log(1 / alpha)


GAP_GRID = np.round(np.linspace(-1.0, 1.0, 101), 12)
"""Candidate gaps the confidence sequence of `GapBet` tests, besides ±ε: its bounds are resolved to 0.02."""


class GapBet(Bettors):
    """Sequential tests on the gap p_a − p_b of one pair of groups, fed paired outcomes (d = x − y per pair).

    For each candidate gap m on a grid (with ±ε among them) one bettor stakes on d − m (against p_a − p_b ≤ m) and
    one on m − d (against p_a − p_b ≥ m). Four of them are the verdicts: a violation when the bettor against gap ≤ ε
    or the one against gap ≥ −ε reaches 2/α; a certification when both the bettor against gap ≥ ε and the one
    against gap ≤ −ε reach 1/α (each one-sided null rejected at α: an intersection–union test). Together they are a
    confidence sequence: the candidates not rejected at 2/α from either side, so the violation verdict turns exactly
    where the band's lower (or upper) end reaches ε (or −ε).

    >>> bet = GapBet(epsilon=0.1)
    >>> for _ in range(30):
    ...     bet.update(1.0, 0.0)
    >>> bet.pairs, bet.rejects(0.05), bet.certifies(0.05), bet.bounds(0.05)[0] > 0.1
    (30, 'a>b', False, True)
    """

    __slots__ = ("epsilon", "_grid")

    def __init__(self, epsilon: float):
        if not 0 <= epsilon < 1:
            raise ValueError(BAD_EPSILON.format(epsilon=epsilon))
        self.epsilon = epsilon
        self._grid = np.union1d(GAP_GRID, [-epsilon, epsilon])
        size = len(self._grid)
        above = np.column_stack([np.ones(size), -np.ones(size), -self._grid])  # d − m: against gap ≤ m
        below = np.column_stack([-np.ones(size), np.ones(size), self._grid])  # m − d: against gap ≥ m
        at = {value: index for index, value in enumerate(self._grid)}
        index = (at[epsilon], size + at[-epsilon], size + at[epsilon], at[-epsilon])  # gap ≤ ε, ≥ −ε; gap ≥ ε, ≤ −ε
        super().__init__(np.vstack([above, below]), np.concatenate([1 + self._grid, 1 - self._grid]), index)

    def bounds(self, alpha: float) -> tuple[float, float]:
        """The gap's confidence sequence at level 1 − α (α/2 a side), valid at every pair at once: the lower end is the
        highest candidate m such that every candidate up to it has been rejected as an upper limit of the gap (so the
        true gap lies above it unless the bettor on the candidate just above the gap has won falsely), the upper end
        likewise from above. The gap lies strictly inside: a lower end at ε is the violation verdict."""
        return self._band(self._grid, alpha, -1.0, 1.0)


RATIO_GRID = np.round(np.linspace(0.0, 1.0, 101), 12)
"""Candidate ratios in [0, 1] that the confidence sequence of `RatioBet` tests, besides τ, each as p_b/p_a and as
p_a/p_b: its bounds on the smaller ratio are resolved to 0.01."""


def _ratio_candidates(threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The candidates m for ρ = p_b/p_a in ascending order (k ≤ 1 as itself, then 1/k), and per candidate the payoff
    rows (a, b, c) of the bettor against ρ ≤ m and of the one against ρ ≥ m, scaled so no coefficient exceeds 1."""
    small = np.union1d(RATIO_GRID, [threshold])
    large = small[::-1][1:-1]  # 1/k for k from just below 1 down to the smallest positive candidate
    candidates = np.concatenate([small, 1 / large])
    zeros = np.zeros(len(small) + len(large))
    against_at_most = np.column_stack([np.concatenate([-small, -np.ones(len(large))]), np.concatenate([np.ones(len(small)), large]), zeros])
    return candidates, against_at_most, -against_at_most


class RatioBet(Bettors):
    """The tests for the ratio of two rates against τ (disparate impact, the four-fifths rule at τ = 0.8), and the
    confidence sequence of ρ = p_b/p_a they form: for each candidate m on a grid one bettor stakes against ρ ≤ m (on
    y − m·x, or on k·y − x for m = 1/k > 1) and one against ρ ≥ m. The verdicts are read off the sequence at the
    pair's level, so a record's interval and its verdict agree: a violation when the interval of the smaller ratio
    min(ρ, 1/ρ) ends below τ, a certification when it starts at τ or above (both at 2/α a side).

    >>> bet = RatioBet(threshold=0.8)
    >>> for _ in range(40):
    ...     bet.update(1.0, 0.0)
    >>> bet.rejects(0.05), bet.certifies(0.05), bet.bounds(0.05)[1] < 0.8
    ('a>b', False, True)
    """

    __slots__ = ("epsilon", "_candidates")

    def __init__(self, threshold: float):
        if not 0 < threshold <= 1:
            raise ValueError(BAD_RATIO.format(threshold=threshold))
        self.epsilon = threshold
        self._candidates, at_most, at_least = _ratio_candidates(threshold)
        size = len(self._candidates)
        at = {round(value, 12): index for index, value in enumerate(self._candidates)}
        low, high = at[round(threshold, 12)], at[round(1 / threshold, 12)]
        index = (size + low, high, low, size + high)  # ρ ≥ τ, ρ ≤ 1/τ (violations); ρ ≤ τ, ρ ≥ 1/τ (certification)
        worst = np.concatenate([np.maximum(-at_most[:, :2].min(axis=1), 0), np.maximum(-at_least[:, :2].min(axis=1), 0)])
        super().__init__(np.vstack([at_most, at_least]), worst, index)

    def bounds(self, alpha: float) -> tuple[float, float]:
        """ρ = p_b/p_a lies strictly inside the returned bounds at every pair at once, at level 1 − α (α/2 a side): the
        lower end is the highest candidate such that it and every candidate below it have been rejected as upper limits
        of ρ, the upper end likewise from above (as `GapBet.bounds`)."""
        return self._band(self._candidates, alpha, 0.0, math.inf)

    def rejects(self, alpha: float) -> Literal["a>b", "b>a"] | None:  # type: ignore[override]
        """'a>b' when ρ < τ is established (the sequence's upper end below τ), 'b>a' when ρ > 1/τ, else None."""
        lower, upper = self.bounds(alpha)
        if upper < self.epsilon:
            return "a>b"
        return "b>a" if lower > 1 / self.epsilon else None

    def certifies(self, alpha: float) -> bool:
        """Whether τ ≤ ρ ≤ 1/τ is established: the smaller ratio's interval starts at τ or above."""
        lower, upper = self.bounds(alpha)
        return lower >= self.epsilon and upper <= 1 / self.epsilon


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(BAD_ALPHA.format(alpha=alpha))


