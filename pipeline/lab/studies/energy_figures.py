"""The energy-shield paper's experiments (Cano, Henzinger, Kueffner, 2026): Fig. 1, energy functions on a fair and a
biased decision maker against the idle and the deterministic shield; Fig. 2, two groups with the raw gap known,
estimated online, and changing along a sine; Fig. 3, how the horizon of the exact dynamic programme trades the tail
bound's precision against time.

Every shield acts by `EnergyShield.decide`'s rule (`shield_paths`) on the same seeded raw decisions. The energy
functions of Fig. 1 all have their limit point in L, moved `MARGIN` inside (the paper's forms are stripped from the
copy we have; these satisfy its Def. 4.1 and Eq. 8): an even polynomial and an exponential through the value Eq. 8
asks for, and the least steep member of the monotone family meeting λ. The idle shield never flips; the
deterministic one flips every unfavoured decision while F_t is outside S and none inside.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from fairstream.lab.periodic.stream_periodic import keeps, period_values
from fairstream.shields.energy.drift import ONE_GROUP, TWO_GROUPS, Domain, required_energy
from fairstream.shields.energy.functions import Energy, Exponential, MonotoneEnergy, MonotoneFamily, Polynomial
from fairstream.shields.energy.group_simulation import GroupProblem
from fairstream.shields.energy.group_synthesis import cached_synthesis
from fairstream.shields.energy.shields import AdaptiveGroupShield, GroupShield
from fairstream.shields.energy.simulation import shield_paths
from fairstream.shields.energy.synthesis import synthesize
from fairstream.shields.energy.target import Target
from fairstream.shields.energy.violations import tail_bound, violations
from fairstream.shields.errors import ShieldError

TARGET = Target(50, (0.4, 0.6), (0.45, 0.55))
MARGIN = 0.01
LAMBDA = 0.05
DECISION_MAKERS = {"fair": 0.5, "biased": 0.3}
RATE = 0.3
"""b of the exponential energy: gentle enough that a pivot in [0, 1] lets it reach Eq. 8's value at x_L with ζ ≤ 1."""
HORIZONS = (100, 200, 500, 1000, 2000, 5000)


@dataclass(frozen=True)
class Deterministic:
    """ζ = 0 inside S and 1 outside: flip every unfavoured decision while F_t is outside S (the paper's baseline)."""

    target: Target
    pivot: float
    domain: Domain = ONE_GROUP

    def __call__(self, x: ArrayLike) -> float | np.ndarray:
        values = np.asarray(x, dtype=float)
        low, high = self.target.running
        out = np.where((values < low) | (values > high), 1.0, 0.0)
        return float(out) if np.ndim(x) == 0 else out


def energies(p: float, target: Target = TARGET) -> dict[str, Energy]:
    """The shields of Fig. 1 for raw rate p: polynomial, exponential, monotone (synthesized), idle, deterministic."""
    settled = target.settled(MARGIN)
    (s_lo, s_hi), (l_lo, l_hi) = target.running, settled.limit
    if p < l_lo:
        point, pivot = l_lo, s_hi
    elif p > l_hi:
        point, pivot = l_hi, s_lo
    else:
        point = pivot = p
    if point == pivot:  # p inside L: ζ vanishes at p and grows away from it, as steep as ζ ≤ 1 allows
        polynomial = Polynomial(Polynomial.most(1, pivot), 1, pivot)
        exponential = Exponential(Exponential.most(RATE, pivot), RATE, pivot)
    else:
        polynomial = _through(lambda c: Polynomial.through(point, required_energy(p, point, c), k=1, pivot=c), pivot, point)
        exponential = _through(lambda c: Exponential.through(point, required_energy(p, point, c), b=RATE, pivot=c), pivot, point)
    return {
        "polynomial": polynomial,
        "exponential": exponential,
        "monotone (λ = 0.05)": synthesize(MonotoneFamily(p, settled), LAMBDA, 1000).energy,
        "idle": Polynomial(0.0, 1, pivot),
        "deterministic": Deterministic(target, pivot),
    }


def _through(build, pivot: float, point: float) -> Energy:
    """The member through Eq. 8's value with the pivot nearest S's far edge that keeps ζ ≤ 1: the pivot moves away from
    the limit point in steps of 0.01 (as the paper's App. B suggests) until the function fits."""
    step = 0.01 if pivot > point else -0.01
    for shift in range(100):
        candidate = round(pivot + shift * step, 10)
        if not 0 <= candidate <= 1:
            break
        try:
            return build(candidate)
        except ShieldError:
            continue
    raise ShieldError(f"no pivot between {pivot:g} and the end of [0, 1] fits ζ through x_L = {point:g}")


@dataclass(frozen=True)
class Paths:
    """One shield on one decision maker: the fairness value's 5 %, 50 % and 95 % quantiles over the runs (F_t for one
    group, the gap D_t for two), and the run summaries."""

    band: np.ndarray
    violated: float
    """Share of runs with the value outside S at some t ≥ τ."""
    inside_limit: float
    """Share of runs ending with the value inside L."""
    final: float
    interference: float
    """Mean share of decisions flipped."""


def _paths(values: np.ndarray, interference: float, target: Target) -> Paths:
    """The summary of `values` (runs × steps) against the target."""
    times = np.arange(1, values.shape[1] + 1)
    (s_lo, s_hi), (l_lo, l_hi) = target.running, target.limit
    outside = ((values < s_lo) | (values > s_hi)) & (times >= target.burn_in)
    return Paths(
        band=np.quantile(values, (0.05, 0.5, 0.95), axis=0),
        violated=float(outside.any(axis=1).mean()),
        inside_limit=float(((values[:, -1] >= l_lo) & (values[:, -1] <= l_hi)).mean()),
        final=float(values[:, -1].mean()),
        interference=interference,
    )


def figure_1(runs: int = 300, steps: int = 3000, seed: int = 0, target: Target = TARGET) -> dict[str, dict[str, Paths]]:
    """Per decision maker and shield, the paths of F_t over the same seeded raw decisions and draws."""
    times = np.arange(1, steps + 1)
    results: dict[str, dict[str, Paths]] = {}
    for maker, p in DECISION_MAKERS.items():
        rng = np.random.default_rng(seed)
        decisions = (rng.random((runs, steps)) < p).astype(np.int8)
        draws = rng.random((runs, steps))
        results[maker] = {}
        for name, energy in energies(p, target).items():
            shielded = shield_paths(energy, decisions, draws)  # type: ignore[arg-type]
            results[maker][name] = _paths(np.cumsum(shielded, axis=1) / times, float((shielded != decisions).mean()), target)
    return results


@dataclass(frozen=True)
class HorizonRow:
    horizon: int
    violation: float
    """P(some F_t ∉ S, τ ≤ t ≤ T), exact."""
    tail: float
    """The bound on the rest, Σ_{t > T} P(F_t ∉ S)."""
    seconds: float


def figure_3(p: float = 0.3, target: Target = TARGET, horizons: tuple[int, ...] = HORIZONS) -> list[HorizonRow]:
    """For the member synthesized at T = 1,000: the exact measure and the tail bound at each horizon, and their time."""
    energy = synthesize(MonotoneFamily(p, target.settled(MARGIN)), LAMBDA, 1000).energy
    rows = []
    for horizon in horizons:
        started = time.perf_counter()
        exact = violations(energy, p, target, horizon)
        tail = tail_bound(energy, p, target, horizon)
        rows.append(HorizonRow(horizon, exact.probability, tail, time.perf_counter() - started))
    return rows


GROUP_TARGET = Target(100, (-0.1, 0.1), (-0.05, 0.05))
SHARE_A = 0.5
GROUP_HORIZON = 2000
"""The shipped spec's two-group problem: its member is synthesized for λ over [τ, 2,000] with the constant rates 0.6, 0.3."""


def group_alpha() -> float:
    """The two-group member synthesized for the constant scenario (`cached_synthesis`, as the shipped spec's shield)."""
    problem = GroupProblem(0.6, 0.3, SHARE_A, GROUP_TARGET)
    return cached_synthesis(problem, LAMBDA, GROUP_HORIZON, "probability", MARGIN, 0.99).alpha

SCENARIOS: dict[str, Callable[[int], tuple[float, float]]] = {
    "constant gap 0.3": lambda t: (0.6, 0.3),
    "sine: p_a = 0.6 + 0.15·sin(2πt/2,000)": lambda t: (0.6 + 0.15 * math.sin(2 * math.pi * t / 2000), 0.3),
}
"""(p_a, p_b) at decision t; the fixed shield is told the gap's mean, 0.3, in both."""


def _group_runs(shield, rates: Callable[[int], tuple[float, float]], runs: int, steps: int, seed: int) -> Paths:
    """The shield's own `decide` on seeded arrivals (group a with probability `SHARE_A`) and raw decisions."""
    rng = np.random.default_rng(seed)
    gaps = np.empty((runs, steps))
    flips = 0
    for run in range(runs):
        arrivals, raws, draws = rng.random(steps), rng.random(steps), rng.random(steps)
        state = shield.start()
        for t in range(steps):
            first = arrivals[t] < SHARE_A
            p_a, p_b = rates(t)
            verdict = shield.decide(int(raws[t] < (p_a if first else p_b)), state, float(draws[t]), "a" if first else "b")
            state = shield.next_state(state, verdict)
            flips += verdict.flipped
            gaps[run, t] = verdict.after
    return _paths(gaps, flips / (runs * steps), GROUP_TARGET)


def figure_2(runs: int = 100, steps: int = 4000, seed: int = 0) -> dict[str, dict[str, Paths]]:
    """Per scenario, the two-group shield told the raw gap 0.3 and the adaptive one that estimates it, on the same streams."""
    alpha = group_alpha()
    fixed = GroupShield(MonotoneEnergy(0.3, GROUP_TARGET.settled(MARGIN), alpha, domain=TWO_GROUPS), GROUP_TARGET)
    adaptive = AdaptiveGroupShield(GROUP_TARGET, alpha, settle_margin=MARGIN)
    return {
        scenario: {"told the gap 0.3": _group_runs(fixed, rates, runs, steps, seed), "adaptive": _group_runs(adaptive, rates, runs, steps, seed)}
        for scenario, rates in SCENARIOS.items()
    }


# ---------------------------------------------------------------------------------------------------------------------
# Fig. 4: the energy shield against the naive and the periodic shield, each tuned once to S and once to L

PERIOD = 50
"""Period of the periodic shields of Fig. 4, as in the fairness-shield paper's periodic experiments."""


def naive_paths(interval: tuple[float, float], decisions: np.ndarray) -> np.ndarray:
    """`NaiveShield(interval)` on many runs: flip a 1 that would lift F above the interval, a 0 that would drop it below."""
    low, high = interval
    runs, steps = decisions.shape
    shielded = np.empty_like(decisions)
    ones = np.zeros(runs, dtype=np.int64)
    for t in range(steps):
        raw = decisions[:, t]
        flip = np.where(raw == 1, (ones + 1) / (t + 1) > high, ones / (t + 1) < low)
        shielded[:, t] = np.where(flip, 1 - raw, raw)
        ones += shielded[:, t]
    return shielded


def periodic_paths(p: float, interval: tuple[float, float], decisions: np.ndarray, period: int = PERIOD) -> np.ndarray:
    """`StreamPeriodicShield(p, period, interval)` on many runs: each period's tables conditioned on each run's history."""
    runs, steps = decisions.shape
    shielded = np.empty_like(decisions)
    seen, ones = np.zeros(runs, dtype=np.int64), np.zeros(runs, dtype=np.int64)
    for start in range(0, steps, period):
        values = period_values(p, period, interval, seen, ones)
        aside = ~np.isfinite(values[:, 0, 0])
        within = np.zeros(runs, dtype=np.int64)
        for t in range(min(period, steps - start)):
            raw = decisions[:, start + t]
            kept = aside | keeps(values, t, within, raw)
            out = np.where(kept, raw, 1 - raw)
            shielded[:, start + t] = out
            within += out
        seen, ones = seen + period, ones + within
    return shielded


def figure_4(runs: int = 300, steps: int = 3000, seed: int = 0, p: float = 0.3, target: Target = TARGET) -> dict[str, Paths]:
    """The synthesized energy shield, and the naive and periodic shields tuned to S and to L, on the same biased maker."""
    rng = np.random.default_rng(seed)
    decisions = (rng.random((runs, steps)) < p).astype(np.int8)
    draws = rng.random((runs, steps))
    energy = synthesize(MonotoneFamily(p, target.settled(MARGIN)), LAMBDA, 1000).energy
    outputs = {
        "energy (λ = 0.05)": shield_paths(energy, decisions, draws),
        "naive, tuned to S": naive_paths(target.running, decisions),
        "naive, tuned to L": naive_paths(target.limit, decisions),
        f"periodic ({PERIOD}), tuned to S": periodic_paths(p, target.running, decisions),
        f"periodic ({PERIOD}), tuned to L": periodic_paths(p, target.limit, decisions),
    }
    times = np.arange(1, steps + 1)
    return {name: _paths(np.cumsum(out, axis=1) / times, float((out != decisions).mean()), target) for name, out in outputs.items()}

