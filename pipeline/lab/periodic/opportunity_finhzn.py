"""The fairness-shield paper's FinHzn shield for equal opportunity, and the periodic shields on top of it.

Over a horizon of T candidates, flip the least expected cost of decisions so that the TPR gap φ = |TPR_a − TPR_b| of
the shielded decisions among the qualified (true label 1) is at most κ after the T-th, on every run. The label of a
candidate is revealed after its decision and before the next one; the chance that a candidate of group g proposed r is
qualified is `qualified[(g, r)]`, estimated like θ from past decisions and their labels.

The counts μ are (q, seen_a, ones_a, ones_b) over the q qualified so far (seen_b = q − seen_a). After t candidates
q ≤ t, and enumerating μ by q, then in the FinHzn order of `finhzn._rank`, makes the states of step t the first
C(t + 4, 4) of one sequence. The value v_t(μ), the least expected flip cost still to pay, is

    v_T(μ) = 0 if φ(μ) ≤ κ, else ∞
    v_t(μ) = Σ_{g,r,c} θ(g,r,c) · min_y [c·1{y ≠ r} + P(z=1|g,r)·v_{t+1}(μ + (g, y))] + P(z=0|g,r)·v_{t+1}(μ)

and a candidate is kept when keeping costs no more than flipping (ties kept). As in `finhzn`, v_t(μ) is ∞ unless some
choice ends fair whatever arrives, so a run that starts finite ends fair. About C(T + 5, 5) states (3.5 M at T = 50).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from fairstream.lab.periodic.arrivals import ArrivalModel
from fairstream.lab.periodic.baseline import check_cost, check_decision, flip_verdict, is_first, merge, total
from fairstream.lab.periodic.finhzn import check_problem, fair_mask, parity_gap
from fairstream.shields.energy.shields import GroupCounts, Verdict
from fairstream.shields.energy.states import layer as _layer
from fairstream.shields.energy.states import rank as _rank
from fairstream.shields.errors import ShieldError

BAD_QUALIFIED = "qualified needs 4 probabilities P(z = 1 | g, r) for (a,0) (a,1) (b,0) (b,1); got {qualified!r}"
PAST_HORIZON = "no candidate is left in the horizon T = {horizon}; got {seen} candidates"
BAD_KIND = "kind must be one of static-fair, static-bw, dynamic; got {kind!r}"
WELFARE_KIND = "welfare bounds belong to static-bw; got them for kind {kind!r}"

Rates = tuple[float, float, float, float]
NOTHING = GroupCounts()
"""No counts from before the horizon."""


def _start(q):
    """Index of the first state with q qualified: Σ_{j<q} C(j + 3, 3) = C(q + 3, 4)."""
    return (q + 3) * (q + 2) * (q + 1) * q // 24


def _index(q, seen_a, ones_a, ones_b):
    return _start(q) + _rank(q, seen_a, ones_a, ones_b)


@lru_cache(maxsize=4)
def _states(horizon: int) -> tuple[np.ndarray, ...]:
    """(q, seen_a, ones_a, ones_b) of every state up to q = T, in index order."""
    parts = [(np.full(len(layer[0]), q), *layer) for q in range(horizon + 1) for layer in [_layer(q)]]
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def _times(weight: float, values: np.ndarray) -> np.ndarray:
    """weight · values with 0 · ∞ = 0: a branch of probability 0 costs nothing."""
    return np.zeros_like(values) if weight == 0 else weight * values


def opportunity_values(
    model: ArrivalModel,
    qualified: Rates,
    horizon: int,
    kappa: float,
    offset: GroupCounts = NOTHING,
    welfare: tuple[float, float] | None = None,
    empty: str = "vacuous",
) -> tuple[np.ndarray, ...]:
    """v_t for t = 0 … T, each over the first C(t + 4, 4) states."""
    q, seen_a, ones_a, ones_b = _states(horizon)
    seen_b = q - seen_a
    values = [
        fair_mask(seen_a + offset.seen_a, ones_a + offset.ones_a, seen_b + offset.seen_b, ones_b + offset.ones_b, kappa, welfare, empty)
    ]
    weights, costs = model.array(), np.array(model.costs)
    for t in range(horizon - 1, -1, -1):
        size = _start(t + 1)  # states with q ≤ t
        later = values[-1]
        qq, sa, oa, ob = q[:size], seen_a[:size], ones_a[:size], ones_b[:size]
        same = later[:size]
        succ = {
            ("a", 1): later[_index(qq + 1, sa + 1, oa + 1, ob)],
            ("a", 0): later[_index(qq + 1, sa + 1, oa, ob)],
            ("b", 1): later[_index(qq + 1, sa, oa, ob + 1)],
            ("b", 0): later[_index(qq + 1, sa, oa, ob)],
        }
        feasible = np.isfinite(same) & np.isfinite(np.minimum(succ[("a", 1)], succ[("a", 0)])) & np.isfinite(np.minimum(succ[("b", 1)], succ[("b", 0)]))
        value = np.zeros(size)
        with np.errstate(invalid="ignore"):  # ∞ · 0 in states that are infeasible anyway
            for row, (group, proposed) in enumerate((("a", 0), ("a", 1), ("b", 0), ("b", 1))):
                chance = qualified[row]
                keep = _times(chance, succ[(group, proposed)])
                flip = _times(chance, succ[(group, 1 - proposed)])
                best = np.minimum(keep[:, None], costs[None, :] + flip[:, None])
                value += np.where(feasible, (best * weights[row]).sum(axis=1), 0.0) + np.where(feasible, weights[row].sum() * _times(1 - chance, same), 0.0)
        values.append(np.where(feasible, value, np.inf))
    return tuple(reversed(values))


@dataclass(frozen=True)
class OpportunityState:
    """Candidates seen in the horizon, and the counts over the qualified among them."""

    seen: int = 0
    qualified: GroupCounts = GroupCounts()


def _check_qualified(qualified: Rates) -> None:
    if len(qualified) != 4 or not all(0 <= value <= 1 for value in qualified):
        raise ShieldError(BAD_QUALIFIED.format(qualified=qualified))


@dataclass(frozen=True)
class OpportunityFinHzn:
    """Cost-optimal shield that ends a horizon of `horizon` candidates with |TPR_a − TPR_b| ≤ `kappa` among the qualified.

    >>> shield = OpportunityFinHzn(ArrivalModel.bernoulli(0.5, 0.8, 0.3), (0.2, 0.7, 0.2, 0.7), horizon=12, kappa=0.3)
    >>> math.isfinite(shield.expected_cost)
    True
    """

    model: ArrivalModel
    qualified: Rates
    horizon: int
    kappa: float
    offset: GroupCounts = NOTHING
    groups: tuple[str, str] = ("a", "b")
    welfare: tuple[float, float] | None = None
    """Static-BW's welfare bounds [l, u] on both TPRs."""
    empty: str = "vacuous"
    """How the TPR gap reads while a group has no qualified member: "vacuous" (0) or "zero" (its TPR is 0)."""
    values: tuple[np.ndarray, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_problem(self.horizon, self.kappa, self.welfare, self.groups, self.empty)
        _check_qualified(self.qualified)
        object.__setattr__(
            self, "values", opportunity_values(self.model, self.qualified, self.horizon, self.kappa, self.offset, self.welfare, self.empty)
        )

    def start(self) -> OpportunityState:
        return OpportunityState()

    @property
    def expected_cost(self) -> float:
        """Least expected total flip cost over the horizon; ∞ when no shield can guarantee φ ≤ κ."""
        return self.value(0, GroupCounts())

    def value(self, seen: int, counts: GroupCounts) -> float:
        return float(self.values[seen][_index(total(counts), counts.seen_a, counts.ones_a, counts.ones_b)])

    def decide(self, decision: int, state: OpportunityState, u: float, group: str, cost: float = 1.0) -> Verdict:
        """Keep the proposed decision when P(qualified)·v(kept) ≤ cost + P(qualified)·v(flipped)."""
        if state.seen >= self.horizon:
            raise ShieldError(PAST_HORIZON.format(horizon=self.horizon, seen=state.seen))
        first, proposed, cost = is_first(self.groups, group), check_decision(decision), check_cost(cost)
        chance = self.qualified[(0 if first else 2) + proposed]
        keep, flip = (chance * self.value(state.seen + 1, state.qualified.add(first, y)) if chance else 0.0 for y in (proposed, 1 - proposed))
        flips = keep > cost + flip
        shielded = 1 - proposed if flips else proposed
        after = merge(self.offset, state.qualified.add(first, shielded))
        violation = state.seen + 1 == self.horizon and parity_gap(after, self.empty) > self.kappa
        reason = "flipped" if flips else "kept"
        reason += f": expected cost to end the horizon of {self.horizon} with a TPR gap ≤ {self.kappa}"
        return flip_verdict(proposed, flips, u, merge(self.offset, state.qualified).gap, after.gap, violation, reason, group)

    def next_state(self, state: OpportunityState, verdict: Verdict, label: int) -> OpportunityState:
        qualified = state.qualified.add(is_first(self.groups, verdict.group), verdict.shielded) if check_decision(label) else state.qualified
        return OpportunityState(state.seen + 1, qualified)


@dataclass(frozen=True)
class OpportunityPeriodState:
    """Qualified counts of the closed periods (`before`) and the state within the current period."""

    before: GroupCounts = GroupCounts()
    within: OpportunityState = OpportunityState()


@lru_cache(maxsize=8)
def _period_shield(
    model: ArrivalModel, qualified: Rates, period: int, kappa: float, groups: tuple[str, str], offset: GroupCounts, welfare: tuple[float, float] | None, empty: str
) -> OpportunityFinHzn:
    return OpportunityFinHzn(model, qualified, period, kappa, offset, groups, welfare, empty)


@dataclass(frozen=True)
class OpportunityPeriodic:
    """Static-Fair, Static-BW or Dynamic (`kind`) for equal opportunity: a FinHzn shield per period of `period`
    candidates, with its counters reset (Static-Fair), with both TPRs held in welfare bounds of width ≤ κ (Static-BW),
    or conditioned on the history's qualified counts, standing aside when no shield can end the period fair (Dynamic)."""

    model: ArrivalModel
    qualified: Rates
    period: int
    kappa: float
    kind: str = "dynamic"
    groups: tuple[str, str] = ("a", "b")
    welfare: tuple[float, float] | None = None
    """Static-BW's welfare bounds [l, u] on both TPRs; by default width κ around the qualified's proposed acceptance rate."""
    empty: str = "vacuous"
    """How the TPR gap reads while a group has no qualified member (see `OpportunityFinHzn`)."""

    def __post_init__(self) -> None:
        if self.kind not in ("static-fair", "static-bw", "dynamic"):
            raise ShieldError(BAD_KIND.format(kind=self.kind))
        _check_qualified(self.qualified)
        if self.kind != "static-bw" and self.welfare is not None:
            raise ShieldError(WELFARE_KIND.format(kind=self.kind))
        if self.kind == "static-bw" and self.welfare is None:
            rows = self.model.array().sum(axis=1) * np.array(self.qualified)  # P(g, r, z = 1)
            centre = float((rows[1] + rows[3]) / rows.sum()) if rows.sum() > 0 else 0.5
            low = min(max(centre - self.kappa / 2, 0.0), 1.0 - self.kappa)
            object.__setattr__(self, "welfare", (round(low, 12), round(low + self.kappa, 12)))

    def start(self) -> OpportunityPeriodState:
        return OpportunityPeriodState()

    def shield(self, state: OpportunityPeriodState) -> OpportunityFinHzn:
        offset = state.before if self.kind == "dynamic" else GroupCounts()
        return _period_shield(self.model, self.qualified, self.period, self.kappa, self.groups, offset, self.welfare, self.empty)

    def assumption_holds(self, state: OpportunityPeriodState) -> bool:
        """Dynamic's Assumption 2: some shield ends the current period with a TPR gap ≤ κ over the whole history."""
        return math.isfinite(self.shield(state).expected_cost)

    def decide(self, decision: int, state: OpportunityPeriodState, u: float, group: str, cost: float = 1.0) -> Verdict:
        shield = self.shield(state)
        if self.kind == "dynamic" and not self.assumption_holds(state):
            after = merge(state.before, state.within.qualified.add(is_first(self.groups, group), check_decision(decision)))
            reason = f"kept: no shield can end this period with a TPR gap ≤ {self.kappa} over the whole history; standing aside"
            return flip_verdict(decision, False, u, merge(state.before, state.within.qualified).gap, after.gap, False, reason, group)
        return shield.decide(decision, state.within, u, group, cost)

    def next_state(self, state: OpportunityPeriodState, verdict: Verdict, label: int) -> OpportunityPeriodState:
        within = self.shield(state).next_state(state.within, verdict, label)
        if within.seen == self.period:
            return OpportunityPeriodState(merge(state.before, within.qualified))
        return OpportunityPeriodState(state.before, within)
