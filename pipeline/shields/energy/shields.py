"""Energy shields at run time: one group, the demographic-parity gap of two groups, and either with p unknown.

Every shield is pure: `decide(decision, state, u)` returns a frozen `Verdict` and `next_state(state, verdict)` the
counts after it. The only randomness is `u`, drawn by `uniform(seed, decision_id)`, so a replay makes the same choices.
Below the pivot the shield favours the decision that raises the fairness value, above it the one that lowers it;
an unfavoured decision is flipped when u < ζ(fairness), i.e. with probability ζ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from fairstream.shields.checks import check_decision, check_draw, check_groups, is_first
from fairstream.shields.energy.drift import ONE_GROUP, TWO_GROUPS
from fairstream.shields.energy.functions import Energy, MonotoneEnergy
from fairstream.shields.energy.placement import EVEN, Placement
from fairstream.shields.energy.target import Target
from fairstream.shields.errors import ShieldError

BAD_COUNTS = "counts must be integers with 0 ≤ ones ≤ seen; got {counts}; start from the shield's start()"
BAD_DOMAIN = "{shield} needs an energy on the domain {expected}; got {domain}; build it with domain={expected}"
NOT_STRICT = "the adaptive shield needs L strictly inside S; got S = {running}, L = {limit}; widen S or narrow L"

NOTHING_YET = "kept: no decisions yet, and F_0 is taken to be the pivot {pivot:.4g}"
AT_PIVOT = "kept: {name} = {before:.4g} is at the pivot, where ζ = 0"
FAVOURED = "kept: {name} = {before:.4g} {relation} pivot {pivot:.4g} favours {favoured}{whom}, the proposed decision"
FLIPPED = "flipped: {name} = {before:.4g} {relation} pivot {pivot:.4g} favours {favoured}{whom}; u = {u:.4g} < ζ = {zeta:.4g}"
SPARED = "kept: {name} = {before:.4g} {relation} pivot {pivot:.4g} favours {favoured}{whom}; u = {u:.4g} ≥ ζ = {zeta:.4g}"
PLACED = " (ζ(D) = {energy:.4g}, placed: the smaller group's flips first)"


def uniform(seed: int, decision_id: str) -> float:
    """A uniform draw in [0, 1) fixed by (seed, decision id): 53 bits of blake2b, so a replay flips the same decisions.

    >>> uniform(7, "d-1") == uniform(7, "d-1") != uniform(8, "d-1")
    True
    """
    digest = hashlib.blake2b(f"{seed}\x1f{decision_id}".encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 11) / 2**53


@dataclass(frozen=True)
class Verdict:
    """One shielded decision: the raw and the output decision, the chance it had of being flipped, F before and after, and why.

    `probability` is ζ(fairness before) when the raw decision was the unfavoured one and 0 otherwise; `violation` says
    whether the fairness value after it lies outside S at or after the burn-in.
    """

    decision: int
    shielded: int
    flipped: bool
    probability: float
    before: float
    after: float
    violation: bool
    why: str
    """The reason in words, or its template when `words` fill it in."""
    group: str | None = None
    words: dict[str, object] | None = None

    @property
    def reason(self) -> str:
        """Why the decision was kept or flipped: formatted when asked (for an intervention record), not per decision."""
        return self.why if self.words is None else self.why.format(**self.words)


def _check_decision(decision: object, u: float) -> None:
    check_decision(decision)
    check_draw(u)


def _check_counts(counts: object, *pairs: tuple[int, int]) -> None:
    for seen, ones in pairs:
        if not (isinstance(seen, int) and isinstance(ones, int) and 0 <= ones <= seen):
            raise ShieldError(BAD_COUNTS.format(counts=counts))


def _check_strict(target: Target) -> None:
    """An adaptive shield's members may put their limit point at either end of L: L must lie strictly inside S."""
    (s_lo, s_hi), (l_lo, l_hi) = target.running, target.limit
    if not (s_lo < l_lo and l_hi < s_hi):
        raise ShieldError(NOT_STRICT.format(running=target.running, limit=target.limit))


Act = tuple[int, float, str, dict[str, object]]
"""What the energy rule returns: the output decision, its flip probability, and the reason's template and words."""


def _act(decision: int, before: float, energy: Energy, u: float, rising: int, name: str, whom: str = "", place: Callable[[float, bool], float] | None = None) -> Act:
    """Apply the energy rule: `rising` is the decision that raises the fairness value `name`; `place` turns ζ into the
    flip probability of this decision's group (`Placement`), given whether the value is below the pivot."""
    pivot = energy.pivot
    if before == pivot:
        return decision, 0.0, AT_PIVOT, {"name": name, "before": before}
    favoured, relation = (rising, "<") if before < pivot else (1 - rising, ">")
    words = {"name": name, "before": before, "relation": relation, "pivot": pivot, "favoured": favoured, "whom": whom}
    if decision == favoured:
        return decision, 0.0, FAVOURED, words
    zeta = float(energy(before))
    chance = zeta if place is None else place(zeta, before < pivot)
    words.update(u=u, zeta=chance)
    if place is not None:
        words["energy"] = zeta
    if u < chance:
        return favoured, chance, FLIPPED if place is None else FLIPPED + PLACED, words
    return decision, chance, SPARED if place is None else SPARED + PLACED, words


@dataclass(frozen=True)
class Counts:
    """State of a one-group shield: decisions seen and shielded 1s among them (F_t = ones/seen)."""

    seen: int = 0
    ones: int = 0

    def __post_init__(self) -> None:
        _check_counts(self, (self.seen, self.ones))


def _one_group(decision: int, seen: int, ones: int, energy: Energy, target: Target, u: float) -> Verdict:
    _check_decision(decision, u)
    if seen == 0:
        before = energy.pivot
        shielded, probability, why, words = decision, 0.0, NOTHING_YET, {"pivot": before}
    else:
        before = ones / seen
        shielded, probability, why, words = _act(decision, before, energy, u, rising=1, name="F_t")
    after = (ones + shielded) / (seen + 1)
    violation = seen + 1 >= target.burn_in and target.outside(after)
    return Verdict(decision, shielded, shielded != decision, probability, before, after, violation, why, None, words)


@dataclass(frozen=True)
class EnergyShield:
    """One group: F_t is the running share of shielded 1s; the shield flips against the side of the pivot with probability ζ(F_t).

    >>> from fairstream.shields.energy.functions import MonotoneEnergy
    >>> target = Target(50, (0.4, 0.6), (0.45, 0.55))
    >>> shield = EnergyShield(MonotoneEnergy(0.3, target, alpha=0.5), target)
    >>> verdict = shield.decide(0, Counts(seen=10, ones=2), u=0.1)
    >>> verdict.shielded, verdict.flipped, round(verdict.probability, 4), verdict.after
    (1, True, 0.6071, 0.2727272727272727)
    """

    energy: Energy
    target: Target

    def __post_init__(self) -> None:
        if tuple(self.energy.domain) != ONE_GROUP:
            raise ShieldError(BAD_DOMAIN.format(shield="the one-group shield", expected=ONE_GROUP, domain=self.energy.domain))

    def start(self) -> Counts:
        """The state before any decision."""
        return Counts()

    def decide(self, decision: int, state: Counts, u: float) -> Verdict:
        """Shield one raw decision given the counts so far and the draw u."""
        return _one_group(decision, state.seen, state.ones, self.energy, self.target, u)

    def next_state(self, state: Counts, verdict: Verdict) -> Counts:
        """The counts after the verdict's shielded decision."""
        return Counts(state.seen + 1, state.ones + verdict.shielded)


@dataclass(frozen=True)
class GroupCounts:
    """State of the two-group shield: appearances and shielded acceptances of each group."""

    seen_a: int = 0
    ones_a: int = 0
    seen_b: int = 0
    ones_b: int = 0

    def __post_init__(self) -> None:
        # One chained comparison on the path every decision takes; the full check only names what is wrong.
        if not (type(self.seen_a) is type(self.ones_a) is type(self.seen_b) is type(self.ones_b) is int and 0 <= self.ones_a <= self.seen_a and 0 <= self.ones_b <= self.seen_b):
            _check_counts(self, (self.seen_a, self.ones_a), (self.seen_b, self.ones_b))

    def gap_after(self, first: bool, decision: int) -> float:
        """The gap after one more decision in group a (`first`) or group b, without building the counts."""
        if first:
            return (self.ones_a + decision) / (self.seen_a + 1) - (self.ones_b / self.seen_b if self.seen_b else 0.0)
        return (self.ones_a / self.seen_a if self.seen_a else 0.0) - (self.ones_b + decision) / (self.seen_b + 1)

    @property
    def gap(self) -> float:
        """D = r_a − r_b, the demographic-parity gap of the shielded decisions; an empty group counts as rate 0."""
        rate_a = self.ones_a / self.seen_a if self.seen_a else 0.0
        rate_b = self.ones_b / self.seen_b if self.seen_b else 0.0
        return rate_a - rate_b

    def add(self, first: bool, decision: int) -> GroupCounts:
        """The counts after one more decision in group a (`first`) or group b."""
        if first:
            return GroupCounts(self.seen_a + 1, self.ones_a + decision, self.seen_b, self.ones_b)
        return GroupCounts(self.seen_a, self.ones_a, self.seen_b + 1, self.ones_b + decision)


@dataclass(frozen=True)
class GroupShield:
    """Two groups, demographic parity (Sec. 7): the fairness value is the gap D = r_a − r_b ∈ [−1, 1].

    Below the pivot it favours acceptance in group a and rejection in group b, above it the reverse; the energy and the
    target live on [−1, 1], and p of the theory is the raw gap p_a − p_b.

    >>> from fairstream.shields.energy.functions import MonotoneEnergy
    >>> target = Target(50, (-0.1, 0.1), (-0.05, 0.05))
    >>> shield = GroupShield(MonotoneEnergy(0.3, target, alpha=0.5, domain=(-1.0, 1.0)), target, groups=("men", "women"))
    >>> verdict = shield.decide(1, GroupCounts(10, 6, 10, 3), u=0.2, group="men")
    >>> verdict.shielded, round(verdict.before, 4), round(verdict.after, 4)
    (0, 0.3, 0.2455)
    """

    energy: Energy
    target: Target
    groups: tuple[str, str] = ("a", "b")
    placement: Placement = EVEN
    """Where the flips go between the groups (`Placement`): the even rule unless the shares are uneven and the rates known."""

    def __post_init__(self) -> None:
        if tuple(self.energy.domain) != TWO_GROUPS:
            raise ShieldError(BAD_DOMAIN.format(shield="the two-group shield", expected=TWO_GROUPS, domain=self.energy.domain))
        check_groups(self.groups)

    def start(self) -> GroupCounts:
        """The state before any decision."""
        return GroupCounts()

    def decide(self, decision: int, state: GroupCounts, u: float, group: str, rates: tuple[float, float] | None = None) -> Verdict:
        """Shield one raw decision for a member of `group` given the counts so far and the draw u; `rates`: the raw
        rates the placement weighs by, where they are estimated as the shield goes."""
        _check_decision(decision, u)
        first = is_first(self.groups, group)
        before = state.gap
        placement = self.placement
        place = None if placement.even else (lambda zeta, below: placement.chance(zeta, below, first, rates))
        shielded, probability, why, words = _act(decision, before, self.energy, u, rising=1 if first else 0, name="D_t", whom=" in group " + group, place=place)
        after = state.gap_after(first, shielded)
        seen = state.seen_a + state.seen_b + 1
        violation = seen >= self.target.burn_in and self.target.outside(after)
        return Verdict(decision, shielded, shielded != decision, probability, before, after, violation, why, group, words)

    def next_state(self, state: GroupCounts, verdict: Verdict) -> GroupCounts:
        """The counts after the verdict's shielded decision in its group."""
        return state.add(is_first(self.groups, verdict.group), verdict.shielded)


@dataclass(frozen=True)
class AdaptiveCounts:
    """State of the adaptive shield: decisions seen, shielded 1s and raw 1s (for the estimate of p)."""

    seen: int = 0
    ones: int = 0
    raw_ones: int = 0

    def __post_init__(self) -> None:
        _check_counts(self, (self.seen, self.ones), (self.seen, self.raw_ones))


@dataclass(frozen=True)
class AdaptiveShield:
    """One group with p unknown (Thm 9.1): each step uses the member for the current estimate p̂ of the raw rate.

    p̂ = (raw 1s + ½)/(seen + 1) (Krichevsky–Trofimov: the running mean of the raw decisions, defined before the first).
    For every q the member `MonotoneEnergy(q, target, alpha, k)` has its fixpoint in L (Eq. 13), at l_lo, q or l_hi,
    and it varies continuously with q except where q crosses an end of L, so F_t → x_L for the true p.

    >>> shield = AdaptiveShield(Target(50, (0.4, 0.6), (0.45, 0.55)), alpha=0.5)
    >>> round(shield.estimate(AdaptiveCounts(seen=9, ones=4, raw_ones=2)), 4)
    0.25
    """

    target: Target
    alpha: float
    k: int = 2

    def __post_init__(self) -> None:
        _check_strict(self.target)
        self.energy(self.start())

    def start(self) -> AdaptiveCounts:
        """The state before any decision."""
        return AdaptiveCounts()

    def estimate(self, state: AdaptiveCounts) -> float:
        """The current estimate p̂ of the raw acceptance rate, from the raw decisions before this one."""
        return (state.raw_ones + 0.5) / (state.seen + 1)

    def energy(self, state: AdaptiveCounts) -> MonotoneEnergy:
        """The member of the family for the current estimate."""
        return MonotoneEnergy(self.estimate(state), self.target, self.alpha, self.k)

    def decide(self, decision: int, state: AdaptiveCounts, u: float) -> Verdict:
        """Shield one raw decision with the member for p̂; the raw decision itself enters p̂ only afterwards."""
        return _one_group(decision, state.seen, state.ones, self.energy(state), self.target, u)

    def next_state(self, state: AdaptiveCounts, verdict: Verdict) -> AdaptiveCounts:
        """The counts after the verdict: its shielded decision and its raw decision."""
        return AdaptiveCounts(state.seen + 1, state.ones + verdict.shielded, state.raw_ones + verdict.decision)


ESTIMATE_STEP = 1e-3
"""The adaptive two-group shield rounds its estimate of the raw gap to this grid, so it reuses the member built for a
rounded value; every member has its fixpoint in L, so rounding changes where in L the gap settles by at most half a step."""


@dataclass(frozen=True)
class AdaptiveGroupCounts:
    """State of the adaptive two-group shield: the shielded counts, and each group's estimated raw acceptance rate."""

    counts: GroupCounts = GroupCounts()
    rate_a: float = 0.5
    rate_b: float = 0.5


@dataclass(frozen=True)
class AdaptiveGroupShield:
    """Two groups with the raw gap unknown or changing: each decision uses the member of the monotone family for the
    current estimate p̂ = p̂_a − p̂_b of the raw gap.

    Each group's rate is estimated from its raw decisions: their mean (Krichevsky–Trofimov, (raw 1s + ½)/(n + 1)) over
    its first `memory` decisions, then a moving average that weighs each new decision 1/(memory + 2), so a decision maker
    that changes is followed within a few `memory` decisions. For every q the member for q has its fixpoint in L — at
    an end of L moved `settle_margin` inside, or at q itself when q lies in L — so the gap settles where the member for
    the true raw gap sends it, up to the estimate's error (standard deviation about √(p(1 − p)/(2·memory)) per group,
    which moves the fixpoint by a fraction of it, well inside the margin). A gap already inside L is its own target:
    the shield keeps D near it and never widens it. While p̂ is still wrong the shield may push the wrong way; the
    burn-in and S should leave room for that.

    >>> shield = AdaptiveGroupShield(Target(50, (-0.1, 0.1), (-0.05, 0.05)), alpha=0.5, groups=("men", "women"))
    >>> state = AdaptiveGroupCounts(GroupCounts(9, 6, 9, 2), rate_a=0.75, rate_b=0.25)
    >>> shield.estimate(state), shield.energy(state).limit_point
    (0.5, 0.04)
    """

    target: Target
    alpha: float
    groups: tuple[str, str] = ("a", "b")
    k: int = 2
    settle_margin: float = 0.01
    memory: int = 300

    def __post_init__(self) -> None:
        check_groups(self.groups)
        _check_strict(self.target)
        self.energy(self.start())

    def start(self) -> AdaptiveGroupCounts:
        return AdaptiveGroupCounts()

    def estimate(self, state: AdaptiveGroupCounts) -> float:
        """p̂_a − p̂_b from the raw decisions before this one."""
        return state.rate_a - state.rate_b

    def energy(self, state: AdaptiveGroupCounts) -> MonotoneEnergy:
        """The member of the family for the current estimate, rounded to `ESTIMATE_STEP`."""
        return self._shield(state).energy  # type: ignore[return-value]

    def _shield(self, state: AdaptiveGroupCounts) -> GroupShield:
        gap = round(self.estimate(state) / ESTIMATE_STEP) * ESTIMATE_STEP
        return _group_shield(gap, self.target, self.alpha, self.k, self.settle_margin, self.groups)

    def decide(self, decision: int, state: AdaptiveGroupCounts, u: float, group: str) -> Verdict:
        """Shield one raw decision with the member for p̂; the raw decision enters p̂ only afterwards."""
        return self._shield(state).decide(decision, state.counts, u, group)

    def next_state(self, state: AdaptiveGroupCounts, verdict: Verdict) -> AdaptiveGroupCounts:
        """The shielded counts after the verdict, and its group's estimate moved toward its raw decision."""
        first = is_first(self.groups, verdict.group)
        seen = state.counts.seen_a if first else state.counts.seen_b
        rate = state.rate_a if first else state.rate_b
        rate += (verdict.decision - rate) / (min(seen, self.memory) + 2)
        counts = state.counts.add(first, verdict.shielded)
        return AdaptiveGroupCounts(counts, rate, state.rate_b) if first else AdaptiveGroupCounts(counts, state.rate_a, rate)


@lru_cache(maxsize=4096)
def _group_shield(gap: float, target: Target, alpha: float, k: int, settle_margin: float, groups: tuple[str, str]) -> GroupShield:
    """The two-group shield of the member for raw gap `gap`, its limit point `settle_margin` inside L (cached: the
    adaptive shield asks for the same rounded estimates again and again)."""
    energy = MonotoneEnergy(min(1.0, max(-1.0, gap)), target.settled(settle_margin), alpha, k, domain=TWO_GROUPS)
    return GroupShield(energy, target, groups)
