"""Demographic parity over k ≥ 2 groups: the fairness value is the spread D = max_g r_g − min_g r_g of the groups'
shielded acceptance rates (over the groups seen so far; 0 until two have been), and S = [0, s] bounds it (pure).

Only a decision of a group at an extreme moves the spread, so only those are shielded: acceptance is favoured for a
group at the lowest rate, rejection for one at the highest; the others are kept (nor is anything done before the
group has a rate, or while all rates are equal). The unfavoured raw decision is flipped with probability ζ_α(D) =
α·min(1, (D/s)^k), placed between the two extreme groups as two groups' flips are (`placement.placed`: the smaller
share's first, the same push): nothing at D = 0, and the least steep α whose probability of D leaving S over
decisions τ … T stays within λ is synthesized by simulation (a one-sided Clopper–Pearson bound at the stated
confidence, jointly for the members the bisection may evaluate), as for two groups. Two groups make the two-group
shield's |D| with this family.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from fairstream.shields.energy.functions import STEEPNESS
from fairstream.shields.energy.group_synthesis import candidates, clopper_pearson_upper, least_steep
from fairstream.shields.energy.placement import placed, placed_array
from fairstream.shields.energy.shields import Verdict
from fairstream.shields.energy.target import Target
from fairstream.shields.errors import ShieldError

NONE_MEETS = (
    "no member of the spread family meets λ = {lam:g} over [τ, {horizon}]: the steepest (α = 1) only reaches a bound of "
    "{value:.4g}; raise the burn-in, widen S or raise λ"
)


@dataclass(frozen=True)
class SpreadEnergy:
    """ζ_α(D) = α·min(1, (D/s)^k) for the spread D ≥ 0, s the upper end of S."""

    alpha: float
    scale: float
    k: int = 2

    def __post_init__(self) -> None:
        if not STEEPNESS[0] <= self.alpha <= STEEPNESS[1]:
            raise ShieldError(f"the steepness α lies in [0, 1]; got {self.alpha!r}")
        if not self.scale > 0:
            raise ShieldError(f"S = [0, s] needs s > 0; got {self.scale!r}")

    def __call__(self, spread: Any) -> Any:
        return self.alpha * np.minimum(1.0, (np.maximum(spread, 0.0) / self.scale) ** self.k)

    def value(self, spread: float) -> float:
        return self.alpha * min(1.0, (max(spread, 0.0) / self.scale) ** self.k)


@dataclass(frozen=True)
class SpreadCounts:
    """Per group (in the spec's order): decisions seen and shielded acceptances."""

    seen: tuple[int, ...]
    ones: tuple[int, ...]

    @classmethod
    def start(cls, groups: int) -> SpreadCounts:
        return cls((0,) * groups, (0,) * groups)

    def rates(self) -> list[float | None]:
        return [ones / seen if seen else None for seen, ones in zip(self.seen, self.ones)]

    @property
    def gap(self) -> float:
        """The spread of the rates of the groups seen so far; 0 until two groups have been."""
        return _spread(self.rates())

    def add(self, index: int, decision: int) -> SpreadCounts:
        seen, ones = list(self.seen), list(self.ones)
        seen[index] += 1
        ones[index] += decision
        return SpreadCounts(tuple(seen), tuple(ones))


@dataclass(frozen=True)
class SpreadShield:
    """The k-group shield: `decide` and `next_state` as the two-group shield's, on `SpreadCounts`."""

    energy: SpreadEnergy
    target: Target
    groups: tuple[str, ...]
    rates: tuple[float, ...] | None = None
    """The groups' raw rates and shares the flips are placed by (None: ζ itself for every group)."""
    shares: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if len(self.groups) < 2 or len(set(self.groups)) != len(self.groups):
            raise ShieldError(f"the spread shield needs two or more distinct groups; got {list(self.groups)}")

    def start(self) -> SpreadCounts:
        return SpreadCounts.start(len(self.groups))

    def decide(self, decision: int, state: SpreadCounts, u: float, group: str) -> Verdict:
        index, rates = self.groups.index(group), state.rates()
        before = _spread(rates)
        favoured = _favoured(rates, index)
        if favoured is None or decision == favoured:
            shielded, probability = decision, 0.0
        else:
            probability = self._placed(self.energy.value(before), rates, index, favoured)
            shielded = favoured if u < probability else decision
        after = state.add(index, shielded).gap
        seen = sum(state.seen) + 1
        why = "flipped toward the middle of the groups' rates" if shielded != decision else "kept"
        return Verdict(decision, shielded, shielded != decision, probability, before, after, seen >= self.target.burn_in and self.target.outside(after), why, group)

    def next_state(self, state: SpreadCounts, verdict: Verdict) -> SpreadCounts:
        return state.add(self.groups.index(verdict.group), verdict.shielded)  # type: ignore[arg-type]

    def _placed(self, zeta: float, rates: list[float | None], index: int, favoured: int) -> float:
        """ζ placed between this group and the first group at the other extreme."""
        if self.rates is None or self.shares is None:
            return zeta
        known = [rate for rate in rates if rate is not None]
        other = rates.index(min(known) if favoured == 0 else max(known))
        own_unfavoured = self.rates[index] if favoured == 0 else 1 - self.rates[index]
        other_unfavoured = 1 - self.rates[other] if favoured == 0 else self.rates[other]
        return placed(zeta, self.shares[index], own_unfavoured, self.shares[other], other_unfavoured)


def _spread(rates: list[float | None]) -> float:
    known = [rate for rate in rates if rate is not None]
    return max(known) - min(known) if len(known) > 1 else 0.0


def _favoured(rates: list[float | None], index: int) -> int | None:
    """Acceptance for a group at the lowest known rate, rejection at the highest; None for the others, while all rates
    are equal, or without a rate for the group."""
    known = [rate for rate in rates if rate is not None]
    own = rates[index]
    if own is None or len(known) < 2:
        return None
    high, low = max(known), min(known)
    if high == low or low < own < high:
        return None
    return int(own == low)


@dataclass(frozen=True)
class SpreadProblem:
    """A decision maker for k groups: each group's raw acceptance rate and its share of the decisions, and the target."""

    rates: tuple[float, ...]
    shares: tuple[float, ...]
    target: Target

    def __post_init__(self) -> None:
        if len(self.rates) != len(self.shares) or len(self.rates) < 2:
            raise ShieldError(f"give a rate and a share for each of two or more groups; got rates {list(self.rates)}, shares {list(self.shares)}")
        if not all(0 <= rate <= 1 for rate in self.rates) or not all(share > 0 for share in self.shares) or not math.isclose(sum(self.shares), 1.0):
            raise ShieldError(f"rates lie in [0, 1] and shares are positive and sum to 1; got rates {list(self.rates)}, shares {list(self.shares)}")
        if self.target.running[0] != 0:
            raise ShieldError(f"the spread is at least 0: S is [0, s]; got {list(self.target.running)}")


def _spreads(seen: np.ndarray, ones: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per stream (rows) of per-group counts: the rates, which groups have one, the highest and lowest rate (∓inf
    without any) and the spread (0 until two groups have a rate)."""
    known = seen > 0
    rate = np.divide(ones, seen, out=np.zeros(seen.shape), where=known)
    high, low = np.where(known, rate, -np.inf).max(axis=1), np.where(known, rate, np.inf).min(axis=1)
    return rate, known, high, low, np.where(known.sum(axis=1) > 1, high - low, 0.0)


def spread_runs(energy: SpreadEnergy, problem: SpreadProblem, runs: int, horizon: int, seed: int) -> np.ndarray:
    """For `runs` seeded streams of `horizon` decisions through the spread shield: the first t ≥ τ with D_t ∉ S, 0 where none."""
    rng = np.random.default_rng(seed)
    groups = len(problem.rates)
    edges = np.cumsum(problem.shares)[:-1]
    rates, shares = np.asarray(problem.rates), np.asarray(problem.shares)
    seen, ones = np.zeros((runs, groups), dtype=np.int64), np.zeros((runs, groups), dtype=np.int64)
    first_violation = np.zeros(runs, dtype=np.int64)
    streams = np.arange(runs)
    s_hi, burn_in = problem.target.running[1], problem.target.burn_in
    for t in range(1, horizon + 2):
        rate, known, high, low, spread = _spreads(seen, ones)  # D after decision t − 1: judged, then decided by
        if t - 1 >= burn_in:
            first_violation[(first_violation == 0) & (spread > s_hi)] = t - 1
        if t > horizon:
            break
        arrival, raw_draw, u = rng.random((3, runs))
        group = np.searchsorted(edges, arrival, side="right")
        raw = raw_draw < rates[group]
        own = rate[streams, group]
        favoured = own == low
        acts = (known.sum(axis=1) > 1) & known[streams, group] & (high != low) & ((own == high) | (own == low)) & (raw != favoured)
        other = np.where(favoured, np.where(known, rate, -np.inf).argmax(axis=1), np.where(known, rate, np.inf).argmin(axis=1))
        own_unfavoured = np.where(favoured, 1 - rates[group], rates[group])
        other_unfavoured = np.where(favoured, rates[other], 1 - rates[other])
        chance = placed_array(np.asarray(energy(spread)), shares[group], own_unfavoured, shares[other], other_unfavoured)
        shielded = np.where(acts & (u < chance), favoured, raw)
        seen[streams, group] += 1
        ones[streams, group] += shielded
    return first_violation


@dataclass(frozen=True)
class SpreadSynthesis:
    """The member chosen, its simulated probability of D leaving S over [τ, T] and the bound it was certified by."""

    energy: SpreadEnergy
    probability: float
    bound: float
    runs: int
    confidence: float
    evaluated: int
    seconds: float

    @property
    def alpha(self) -> float:
        return self.energy.alpha


def spread_bound(energy: SpreadEnergy, problem: SpreadProblem, horizon: int, confidence: float, runs: int = 2000, seed: int = 0) -> tuple[float, float, int]:
    """One member's simulated probability of D leaving S over [τ, T], its one-sided bound at `confidence`, and the streams."""
    hits = int(np.count_nonzero(spread_runs(energy, problem, runs, horizon, seed)))
    return hits / runs, clopper_pearson_upper(hits, runs, 1 - confidence), runs


@lru_cache(maxsize=16)
def cached_spread(problem: SpreadProblem, lam: float, horizon: int, confidence: float) -> SpreadSynthesis:
    """`synthesize_spread` once per process for the same problem (the command and the decision path ask alike)."""
    return synthesize_spread(problem, lam, horizon, confidence=confidence)


def synthesize_spread(
    problem: SpreadProblem, lam: float, horizon: int, *, tol: float = 0.01, runs: int = 2000, confidence: float = 0.99, seed: int = 0, k: int = 2
) -> SpreadSynthesis:
    """Bisect α over [0, 1] for the least steep member whose bound on P(D leaves S during decisions τ … T) is at most λ."""
    started = time.perf_counter()
    evaluated = candidates(tol)
    delta = (1 - confidence) / evaluated
    scale = problem.target.running[1]

    def judge(alpha: float) -> tuple[float, float]:
        hits = int(np.count_nonzero(spread_runs(SpreadEnergy(alpha, scale, k), problem, runs, horizon, seed)))
        return hits / runs, clopper_pearson_upper(hits, runs, delta)

    alpha, best = least_steep(judge, lambda found: found[1] <= lam, tol)
    if alpha is None:
        raise ShieldError(NONE_MEETS.format(lam=lam, horizon=horizon, value=best[1]))
    return SpreadSynthesis(SpreadEnergy(alpha, scale, k), best[0], best[1], runs, confidence, evaluated, time.perf_counter() - started)
