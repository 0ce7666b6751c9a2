"""A bound for the adaptive two-group shield, whose decision maker's rates are not known: the probability that the gap
leaves S over decisions τ … T, bounded jointly for every decision maker of a stated set — each group's rate constant
on a grid over its range, or jumping halfway from one corner of the ranges to another (the largest changes, met while
the estimates still remember the old rates) — by simulating the shield as it runs, estimates included (pure).

The simulated streams follow `AdaptiveGroupShield` decision for decision: each decision uses the member for the
rounded estimate p̂_a − p̂_b, and the raw decision then moves its group's estimate. The bound is the largest
one-sided Clopper–Pearson bound over the set (jointly over it); where it exceeds λ, the shield refuses λ and names
what it keeps.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fairstream.shields.energy.drift import TWO_GROUPS
from fairstream.shields.energy.functions import MonotoneEnergy
from fairstream.shields.energy.group_synthesis import clopper_pearson_upper
from fairstream.shields.energy.shields import ESTIMATE_STEP
from fairstream.shields.energy.target import Target
from fairstream.shields.errors import ShieldError

GRID = 4
"""Rates per group on the grid over each range: its ends and two points between."""

NONE_KEEPS = (
    "the adaptive shield cannot keep λ = {lam:g} for every decision maker with rates in {ranges} (a grid of {grid} per "
    "group, constant, or jumping halfway between corners): its member α = {alpha:g} keeps {value:.4g}, worst for {worst}; "
    "give the rates, narrow rates_within, widen S, raise the burn-in, or set max_violation to at least {value:.3g}"
)


@dataclass(frozen=True)
class DecisionMakers:
    """The set the bound holds for: each group's raw rate within its range (on a grid of `GRID`), constant or jumping
    halfway through the horizon from any corner of the ranges to any other; the share of group a; the target."""

    ranges: tuple[tuple[float, float], tuple[float, float]]
    share: float
    target: Target

    def members(self) -> list[tuple[float, float, float, float]]:
        """(p_a before, p_b before, p_a after, p_b after) of every decision maker simulated."""
        grids = [np.linspace(low, high, GRID).round(12).tolist() if high > low else [low] for low, high in self.ranges]
        static = [(a, b, a, b) for a, b in itertools.product(*grids)]
        corners = list(dict.fromkeys(itertools.product(*self.ranges)))
        return static + [(*before, *after) for before, after in itertools.permutations(corners, 2)]


class _Members:
    """The members of the monotone family for every rounded estimate of the raw gap, as arrays by estimate index."""

    def __init__(self, alpha: float, target: Target, k: int, settle_margin: float):
        steps = int(round(1 / ESTIMATE_STEP))
        energies = [MonotoneEnergy(min(1.0, max(-1.0, index * ESTIMATE_STEP)), target.settled(settle_margin), alpha, k, domain=TWO_GROUPS) for index in range(-steps, steps + 1)]
        self.offset, self.alpha, self.k = steps, alpha, k
        (s_lo, s_hi), (lo, hi) = target.settled(settle_margin).running, TWO_GROUPS
        self.side = np.array([e.side for e in energies], dtype=float)
        self.pivot = np.array([e.pivot for e in energies])
        self.level = np.array([e.level for e in energies])
        self.point = self.side * np.array([e.limit_point for e in energies])
        self.reflected = self.side * self.pivot
        self.far = np.where(self.side == 1, s_lo, -s_hi)
        self.edge = np.where(self.side == 1, hi, -lo)
        self.below, self.above = self.pivot - s_lo, s_hi - self.pivot

    def zeta(self, index: np.ndarray, x: np.ndarray) -> np.ndarray:
        """ζ(x) of each stream's member, as `MonotoneEnergy` computes it for one float."""
        alpha, k = self.alpha, self.k
        side, c, v = self.side[index], self.pivot[index], self.level[index]
        centred = alpha * np.where(x < c, _ramp(c - x, self.below[index], k), _ramp(x - c, self.above[index], k))
        y, point, pivot = side * x, self.point[index], self.reflected[index]
        with np.errstate(divide="ignore", invalid="ignore"):  # the inner region's formula where a stream is elsewhere
            outer = v + alpha * (1 - v) * _ramp(point - y, point - self.far[index], k)
            inner = v * ((pivot - y) / (pivot - point)) ** k
        beyond = alpha * _ramp(y - pivot, self.edge[index] - pivot, k)
        return np.where(side == 0, centred, np.where(y <= point, outer, np.where(y <= pivot, inner, beyond)))


def _ramp(distance: np.ndarray, scale: np.ndarray, k: int) -> np.ndarray:
    return np.minimum(1.0, (np.maximum(distance, 0.0) / np.where(scale == 0, 1.0, scale)) ** k)


def adaptive_runs(
    alpha: float, makers: DecisionMakers, runs: int, horizon: int, seed: int, *, k: int = 2, settle_margin: float = 0.01, memory: int = 300
) -> np.ndarray:
    """Per decision maker of `makers` (rows) and stream (columns): the first t ≥ τ at which the gap left S, 0 where none."""
    settings = makers.members()
    before_a, before_b, after_a, after_b = (np.repeat(np.array(column), runs) for column in zip(*settings))
    streams = len(before_a)
    members = _Members(alpha, makers.target, k, settle_margin)
    rng = np.random.default_rng(seed)
    seen, ones = np.zeros((2, streams), dtype=np.int64), np.zeros((2, streams), dtype=np.int64)
    estimate = np.full((2, streams), 0.5)
    gap = np.zeros(streams)
    first_violation = np.zeros(streams, dtype=np.int64)
    columns = np.arange(streams)
    (s_lo, s_hi), burn_in, switch = makers.target.running, makers.target.burn_in, horizon // 2
    for t in range(1, horizon + 1):
        arrival, raw_draw, u = rng.random((3, streams))
        first = arrival < makers.share
        p_a, p_b = (before_a, before_b) if t <= switch else (after_a, after_b)
        raw = raw_draw < np.where(first, p_a, p_b)
        index = np.rint((estimate[0] - estimate[1]) / ESTIMATE_STEP).astype(np.int64) + members.offset
        pivot = members.pivot[index]
        favoured = np.where(gap < pivot, first, ~first)
        flip = (gap != pivot) & (raw != favoured) & (u < members.zeta(index, gap))
        shielded = np.where(flip, favoured, raw)
        group = np.where(first, 0, 1)
        count = seen[group, columns]
        estimate[group, columns] += (raw - estimate[group, columns]) / (np.minimum(count, memory) + 2)
        seen[group, columns] += 1
        ones[group, columns] += shielded
        rates = np.divide(ones, seen, out=np.zeros(seen.shape), where=seen > 0)
        gap = rates[0] - rates[1]
        if t >= burn_in:
            first_violation[(first_violation == 0) & ((gap < s_lo) | (gap > s_hi))] = t
    return first_violation.reshape(len(settings), runs)


def named(maker: tuple[float, float, float, float]) -> str:
    """A decision maker as a reader reads it: `rates 0.6, 0.3` or `rates 0.6, 0.3, then 0.9, 0.2 halfway`."""
    before, after = f"{maker[0]:g}, {maker[1]:g}", f"{maker[2]:g}, {maker[3]:g}"
    return f"rates {before}" if before == after else f"rates {before}, then {after} halfway"


@dataclass(frozen=True)
class AdaptiveBound:
    """The member's largest bound over the decision makers, the one it belongs to, and how it was computed."""

    alpha: float
    bound: float
    worst: tuple[float, float, float, float]
    makers: DecisionMakers
    runs: int
    seconds: float

    def require(self, lam: float) -> None:
        """A `ShieldError` naming what the member keeps, and for which decision maker, unless it keeps λ."""
        if self.bound > lam:
            ranges = [list(r) for r in self.makers.ranges]
            raise ShieldError(NONE_KEEPS.format(lam=lam, ranges=ranges, grid=GRID, alpha=self.alpha, value=self.bound, worst=named(self.worst)))


@lru_cache(maxsize=8)
def adaptive_bound(
    alpha: float, makers: DecisionMakers, horizon: int, *, runs: int = 400, confidence: float = 0.99, seed: int = 0, settle_margin: float = 0.01
) -> AdaptiveBound:
    """The member α's probability of the gap leaving S over [τ, T], bounded over the decision makers (once per process
    for the same question: the command and the decision path ask alike)."""
    started = time.perf_counter()
    settings = makers.members()
    hits = np.count_nonzero(adaptive_runs(alpha, makers, runs, horizon, seed, settle_margin=settle_margin), axis=1)
    bounds = [clopper_pearson_upper(int(h), runs, (1 - confidence) / len(settings)) for h in hits]
    worst = int(np.argmax(bounds))
    return AdaptiveBound(alpha, bounds[worst], settings[worst], makers, runs, time.perf_counter() - started)
