"""Many streams of the two-group energy shield at once with numpy, by `GroupShield.decide`'s rule (pure).

Each stream draws, per decision, whether it comes from group a (probability π), its raw decision (Bernoulli p_a or
p_b) and the flip draw u; the same seed gives the same draws whatever the energy, so members of a family are compared
on common streams. What a stream yields is what the violation measures need: when D first left S after the burn-in,
how often it was outside, how many decisions were flipped and where D ended.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairstream.shields.energy.drift import TWO_GROUPS
from fairstream.shields.energy.functions import Energy
from fairstream.shields.energy.target import Target
from fairstream.shields.errors import ShieldError

NOT_TWO_GROUPS = "the two-group shield needs an energy on the domain [-1, 1]; got {domain}; build it with domain=(-1.0, 1.0)"
BAD_RATES = "p_a and p_b must lie in [0, 1] and the share π of group a in (0, 1); got p_a = {p_a!r}, p_b = {p_b!r}, π = {share!r}"


@dataclass(frozen=True)
class GroupProblem:
    """A decision maker for two groups: raw acceptance rates p_a, p_b, the share π of decisions about group a, and the target.

    >>> GroupProblem(0.6, 0.3, 0.5, Target(50, (-0.1, 0.1), (-0.05, 0.05))).raw_gap
    0.3
    """

    p_a: float
    p_b: float
    share: float
    target: Target

    def __post_init__(self) -> None:
        if not (0 <= self.p_a <= 1 and 0 <= self.p_b <= 1 and 0 < self.share < 1):
            raise ShieldError(BAD_RATES.format(p_a=self.p_a, p_b=self.p_b, share=self.share))

    @property
    def raw_gap(self) -> float:
        """p_a − p_b: the gap the decision maker keeps without a shield, the p of the two-group energy family."""
        return round(self.p_a - self.p_b, 12)


@dataclass(frozen=True)
class GroupRuns:
    """Per stream: `first_violation`, the first t ≥ τ with D_t ∉ S (0 when none up to the horizon); `violations`, the
    number of such t; `flips`, the decisions flipped; `final_gap`, D at the horizon."""

    first_violation: np.ndarray
    violations: np.ndarray
    flips: np.ndarray
    final_gap: np.ndarray
    horizon: int

    @property
    def violated(self) -> np.ndarray:
        """Whether each stream left S at some t ∈ [τ, T]."""
        return self.first_violation > 0


def _gap(ones_a: np.ndarray, seen_a: np.ndarray, ones_b: np.ndarray, seen_b: np.ndarray) -> np.ndarray:
    """D = r_a − r_b, an empty group counting as rate 0 (as `GroupCounts.gap`)."""
    rate_a = np.divide(ones_a, seen_a, out=np.zeros(len(seen_a)), where=seen_a > 0)
    rate_b = np.divide(ones_b, seen_b, out=np.zeros(len(seen_b)), where=seen_b > 0)
    return rate_a - rate_b


def group_runs(energy: Energy, problem: GroupProblem, runs: int, horizon: int, seed: int | tuple[int, ...]) -> GroupRuns:
    """`runs` seeded streams of `horizon` decisions through the two-group shield with this energy (`seed` as numpy's
    `default_rng` takes it: an integer, or a tuple of them for streams independent of another seed's).

    Below the pivot acceptance is favoured in group a and rejection in group b, above it the reverse, at it nothing is
    flipped; an unfavoured raw decision becomes the favoured one when u < ζ(D) (`GroupShield.decide`).
    """
    if tuple(energy.domain) != TWO_GROUPS:
        raise ShieldError(NOT_TWO_GROUPS.format(domain=energy.domain))
    rng = np.random.default_rng(seed)
    seen_a, ones_a, seen_b, ones_b = (np.zeros(runs, dtype=np.int64) for _ in range(4))
    first_violation, violations, flips = (np.zeros(runs, dtype=np.int64) for _ in range(3))
    (s_lo, s_hi), burn_in, pivot = problem.target.running, problem.target.burn_in, energy.pivot
    gap = np.zeros(runs)
    for t in range(1, horizon + 1):
        arrival, raw_draw, u = rng.random((3, runs))
        first = arrival < problem.share
        raw = raw_draw < np.where(first, problem.p_a, problem.p_b)
        # Below the pivot the favoured decision is 1 in group a and 0 in group b; above it the reverse.
        favoured = (gap < pivot) == first
        flip = (gap != pivot) & (raw != favoured) & (u < np.asarray(energy(gap)))
        shielded = np.where(flip, favoured, raw)
        flips += flip
        seen_a += first
        ones_a += shielded & first
        seen_b += ~first
        ones_b += shielded & ~first
        gap = _gap(ones_a, seen_a, ones_b, seen_b)
        if t >= burn_in:
            outside = (gap < s_lo) | (gap > s_hi)
            violations += outside
            first_violation[(first_violation == 0) & outside] = t
    return GroupRuns(first_violation, violations, flips, gap, horizon)
