"""Many streams of the two-group energy shield at once with numpy, by `GroupShield.decide`'s rule (pure).

Each stream draws, per decision, whether it comes from group a (probability π), its raw decision (Bernoulli p_a or
p_b) and the flip draw u; the same seed gives the same draws whatever the energy, so members of a family are compared
on common streams. What a stream yields is what the violation measures need: when D first left S after the burn-in,
how often it was outside, how many decisions were flipped and where D ended.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import Any

import numpy as np

from fairstream.shields.energy.drift import TWO_GROUPS
from fairstream.shields.energy.functions import Energy, MonotoneEnergy
from fairstream.shields.energy.placement import Placement
from fairstream.shields.energy.target import Target
from fairstream.shields.errors import ShieldError

try:
    from fairstream.shields.energy import group_kernel
except ImportError:  # installed without a C compiler
    group_kernel = None

BLOCK_STEPS = 256
"""Steps drawn at once: a block of 4,000 streams is 10 MB."""

HELD_BYTES = 256 * 2**20
"""The most memory a synthesis keeps its draws in (T = 5,000 × 4,000 streams take 200 MB); beyond it they are drawn anew per member."""

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
    delay: int = 0
    """Decisions whose outcome the shield does not know yet when it decides (equal opportunity's labels still to come):
    it decides by the gap over all decisions but the last `delay`."""

    def __post_init__(self) -> None:
        if not (0 <= self.p_a <= 1 and 0 <= self.p_b <= 1 and 0 < self.share < 1):
            raise ShieldError(BAD_RATES.format(p_a=self.p_a, p_b=self.p_b, share=self.share))
        if isinstance(self.delay, bool) or not isinstance(self.delay, int) or self.delay < 0:
            raise ShieldError(f"the label delay is a whole number of decisions ≥ 0; got {self.delay!r}")

    @property
    def raw_gap(self) -> float:
        """p_a − p_b: the gap the decision maker keeps without a shield, the p of the two-group energy family."""
        return round(self.p_a - self.p_b, 12)

    @property
    def placement(self) -> Placement:
        """Where the shield's flips go between the groups: the smaller group's first where the shares are uneven."""
        return Placement.of(self.share, (self.p_a, self.p_b))


@dataclass(frozen=True)
class GroupRuns:
    """Per stream: `first_violation`, the first t ≥ τ with D_t ∉ S (0 when none up to the horizon); `violations`, the
    number of such t; `flips`, the decisions flipped; `final_gap`, D at the horizon (the streams' last step: T unless
    they were given up before)."""

    first_violation: np.ndarray
    violations: np.ndarray
    flips: np.ndarray
    final_gap: np.ndarray
    horizon: int

    @property
    def violated(self) -> np.ndarray:
        """Whether each stream left S at some t ∈ [τ, T]."""
        return self.first_violation > 0


Block = tuple[np.ndarray, np.ndarray]
"""Draws of a block of steps, rows steps and columns streams: bits (1: the decision is about group a, 2: the raw
decision accepts) and the flip draw u."""


@dataclass(frozen=True)
class GroupDraws:
    """The random draws of `runs` seeded streams of `horizon` decisions, in blocks of steps. They depend on the
    problem's rates but not on the energy, so a synthesis draws them once for every member it evaluates (`held`), or
    anew per member where they would take more than `HELD_BYTES`."""

    problem: GroupProblem
    runs: int
    horizon: int
    seed: int | tuple[int, ...]
    held: tuple[Block, ...] | None = None

    def blocks(self) -> Iterator[Block]:
        """The draws of up to `BLOCK_STEPS` steps at a time."""
        if self.held is not None:
            yield from self.held
            return
        buffer = np.empty((BLOCK_STEPS, 3, self.runs))
        for start in range(0, self.horizon, BLOCK_STEPS):
            yield self._block(start, buffer)

    def hold(self) -> GroupDraws:
        """These draws kept in memory for reuse, where they fit in `HELD_BYTES` (9 bytes a step of a stream); the blocks
        are drawn on every core, each from its place in the seed's sequence."""
        if self.held is not None or self.runs * self.horizon * 9 > HELD_BYTES:
            return self
        return dataclasses.replace(self, held=tuple(_pool().map(self._block, range(0, self.horizon, BLOCK_STEPS))))

    def _block(self, start: int, buffer: np.ndarray | None = None) -> Block:
        """The block of draws from step `start` (0-based): numpy's generator for the seed, advanced past the draws before,
        gives what one generator drawing 3 × runs numbers per step from the first gives there."""
        steps, problem = min(BLOCK_STEPS, self.horizon - start), self.problem
        bits = np.random.PCG64(self.seed)
        bits.advance(start * 3 * self.runs)
        draws = np.random.Generator(bits).random(out=buffer[:steps]) if buffer is not None else np.random.Generator(bits).random((steps, 3, self.runs))
        if group_kernel is not None:
            drawn, u = np.empty((steps, self.runs), dtype=np.uint8), np.empty((steps, self.runs))
            group_kernel.draw_bits(draws, problem.share, problem.p_a, problem.p_b, drawn, u)
            return drawn, u
        arrival, raw_draw, u = draws.transpose(1, 0, 2)
        first = arrival < problem.share
        raw = raw_draw < np.where(first, problem.p_a, problem.p_b)
        return (first | (raw << 1)).astype(np.uint8), np.ascontiguousarray(u)


def group_runs(
    energy: Energy,
    problem: GroupProblem,
    runs: int,
    horizon: int,
    seed: int | tuple[int, ...],
    draws: GroupDraws | None = None,
    give_up: Callable[[np.ndarray], bool] | None = None,
) -> GroupRuns:
    """`runs` seeded streams of `horizon` decisions through the two-group shield with this energy (`seed` as numpy's
    `default_rng` takes it: an integer, or a tuple of them for streams independent of another seed's); `draws`, those of
    these streams drawn before. `give_up` is asked after each block with the first violations so far: when it says
    so, the streams stop there (`GroupRuns.horizon` says where).

    Below the pivot acceptance is favoured in group a and rejection in group b, above it the reverse, at it nothing is
    flipped; an unfavoured raw decision becomes the favoured one when u < ζ(D) (`GroupShield.decide`). A monotone
    energy's streams are stepped in C where the kernel is built, shared among the cores; others (and all without a
    compiler) with numpy.
    """
    if tuple(energy.domain) != TWO_GROUPS:
        raise ShieldError(NOT_TWO_GROUPS.format(domain=energy.domain))
    draws = draws if draws is not None else GroupDraws(problem, runs, horizon, seed)
    state = _Streams.start(runs, problem.delay)
    step = _compiled_steps(energy, problem) or _numpy_steps(energy, problem)
    start = 1
    for block in draws.blocks():
        step(block, start, state)
        start += len(block[0])
        if give_up is not None and start <= horizon and give_up(state.first_violation):
            break
    return GroupRuns(state.first_violation, state.violations, state.flips, state.gap, start - 1)


@dataclass
class _Streams:
    """Per stream: decisions seen and accepted in each group (`counts`: seen a, accepted a, seen b, accepted b), the two
    groups' rates, the first violation, violations, flips and the gap D; and what the shield decides by when outcomes
    come `delay` decisions late: the counts, rates and gap of the decisions with a known outcome, and the bits (group
    a, accepted) of those still waiting, by step modulo `delay`."""

    counts: np.ndarray
    rates: np.ndarray
    first_violation: np.ndarray
    violations: np.ndarray
    flips: np.ndarray
    gap: np.ndarray
    delay: int
    known_counts: np.ndarray
    known_rates: np.ndarray
    known_gap: np.ndarray
    waiting: np.ndarray

    def arrays(self) -> tuple[Any, ...]:
        """The arrays and the delay in field order, as the kernel takes them (updated in place)."""
        return tuple(getattr(self, name.name) for name in dataclasses.fields(self))

    @classmethod
    def start(cls, runs: int, delay: int = 0) -> _Streams:
        counts, rates, gap = np.zeros((runs, 4), dtype=np.int64), np.zeros((runs, 2)), np.zeros(runs)
        return cls(counts, rates, *(np.zeros(runs, dtype=np.int64) for _ in range(3)), gap, delay, counts.copy(), rates.copy(), gap.copy(), np.zeros((runs, max(delay, 1)), dtype=np.uint8))


Steps = Callable[[Block, int, _Streams], None]
"""Advances the streams by a block of draws whose first step is the given t."""


def _compiled_steps(energy: Energy, problem: GroupProblem) -> Steps | None:
    """The C kernel's steps for a monotone energy, the streams split among the cores; None where the energy is another
    or the kernel is not built."""
    if group_kernel is None or not isinstance(energy, MonotoneEnergy):
        return None
    (s_lo, s_hi), (lo, hi) = energy.target.running, energy.domain
    zeta = group_kernel.MonotoneZeta(energy.side, energy.alpha, energy.k, energy.pivot, energy.level, energy.limit_point, s_lo, s_hi, lo, hi)
    (run_lo, run_hi), burn_in = problem.target.running, problem.target.burn_in
    placement = problem.placement
    smaller = -1 if placement.first_smaller is None else int(placement.first_smaller)

    def steps(block: Block, start: int, state: _Streams) -> None:
        runs = len(state.gap)
        shares = min(len(_CORES), max(1, runs // 1000))
        edges = [runs * share // shares for share in range(shares + 1)]
        pool = _pool()  # the kernel releases the GIL: streams apart are stepped at once
        for done in [pool.submit(group_kernel.run_block, zeta, energy.pivot, smaller, problem.p_a, problem.p_b, *block, start, burn_in, run_lo, run_hi, first, end, *state.arrays()) for first, end in pairwise(edges)]:
            done.result()

    return steps


_CORES = os.sched_getaffinity(0)


@cache
def _pool() -> ThreadPoolExecutor:
    """The threads the kernel steps streams on, one per core this process may use, started once."""
    return ThreadPoolExecutor(len(_CORES), thread_name_prefix="group-streams")


def _numpy_steps(energy: Energy, problem: GroupProblem) -> Steps:
    """The same steps with numpy, one step of every stream at a time."""
    (s_lo, s_hi), burn_in, pivot, placement = problem.target.running, problem.target.burn_in, energy.pivot, problem.placement

    def steps(block: Block, start: int, state: _Streams) -> None:
        counts, delay = state.counts, state.delay
        for offset, (bits, u) in enumerate(zip(*block)):
            t = start + offset
            first, raw, known = (bits & 1).astype(bool), (bits >> 1).astype(bool), state.known_gap
            # Below the pivot the favoured decision is 1 in group a and 0 in group b; above it the reverse.
            favoured = (known < pivot) == first
            flip = (known != pivot) & (raw != favoured) & (u < placement.chances(np.asarray(energy(known)), known < pivot, first))
            shielded = np.where(flip, favoured, raw)
            state.flips += flip
            counts += _added(first, shielded)
            state.gap = _gap(counts[:, 1], counts[:, 0], counts[:, 3], counts[:, 2])
            if t >= burn_in:
                outside = (state.gap < s_lo) | (state.gap > s_hi)
                state.violations += outside
                state.first_violation[(state.first_violation == 0) & outside] = t
            if not delay:
                state.known_gap = state.gap
                continue
            slot = (t - 1) % delay
            if t > delay:  # the decision `delay` steps back has its outcome now
                held = state.waiting[:, slot]
                state.known_counts += _added((held & 1).astype(bool), (held >> 1).astype(bool))
                known_counts = state.known_counts
                state.known_gap = _gap(known_counts[:, 1], known_counts[:, 0], known_counts[:, 3], known_counts[:, 2])
            state.waiting[:, slot] = first | (shielded << 1)

    return steps


def _added(first: np.ndarray, accepted: np.ndarray) -> np.ndarray:
    """What one decision per stream adds to (seen a, accepted a, seen b, accepted b)."""
    return np.stack([first, accepted & first, ~first, accepted & ~first], axis=1)


def _gap(ones_a: np.ndarray, seen_a: np.ndarray, ones_b: np.ndarray, seen_b: np.ndarray) -> np.ndarray:
    """D = r_a − r_b, an empty group counting as rate 0 (as `GroupCounts.gap`)."""
    rate_a = np.divide(ones_a, seen_a, out=np.zeros(len(seen_a)), where=seen_a > 0)
    rate_b = np.divide(ones_b, seen_b, out=np.zeros(len(seen_b)), where=seen_b > 0)
    return rate_a - rate_b
