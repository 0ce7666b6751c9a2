"""Periodic shields of the fairness-shield paper (Sec. 4): a stream cut into periods of T candidates, with fairness
required at the end of every period.

- `StaticFair` (Def. 3, Thm 2) runs a fresh FinHzn shield in every period, its counters reset. Each period on its own
  ends with φ ≤ κ; the whole history does too when both groups have as many members in every period, and not in
  general: a period of one a and T − 1 b all rejected, then one of T − 1 a and one b all accepted, has φ = 0 in each
  period and φ = 1 − 2/T over both.
- `StaticBW` (Def. 5, Thm 4) bounds each group's own rate in every period to welfare bounds [l, u] of width ≤ κ, which
  concatenate: the whole history is fair at every period end when every period holds enough members of each group.
- `Dynamic` (Def. 6, Thm 5) re-synthesizes at every period start a FinHzn shield conditioned on the history: its
  terminal condition is φ(history + period) ≤ κ, so the whole history is fair at the end of every period. When no shield
  can guarantee that from the period's start (the root value is ∞: Assumption 2 fails), it stands aside for the period
  and keeps every decision, the cheapest shield when none is fair, as in Def. 6 and the authors' code.

Both are synthesized for one `ArrivalModel` θ. `PeriodState` holds the counts before and within the current period.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from fairstream.lab.periodic.arrivals import ArrivalModel
from fairstream.lab.periodic.baseline import check_decision, flip_verdict, is_first, merge, total
from fairstream.lab.periodic.finhzn import FinHznShield, balance, parity_gap
from fairstream.shields.energy.shields import GroupCounts, Verdict
from fairstream.shields.errors import ShieldError

BAD_PERIOD = "period length T must be an integer ≥ 1; got {period!r}"
BAD_STATE = "counts within a period of {length} must number fewer than {length}; got {within}"
WRONG_PERIOD = "the state's period length is {state}, the shield's is {shield}; hint: start from the shield's start()"


@dataclass(frozen=True)
class PeriodState:
    """Counts of the periods already closed (`before`) and of the current one (`within`); a period closes after `length`.

    >>> state = PeriodState(2).add(True, 1).add(False, 0).add(True, 0)
    >>> state.before, state.within, total(state.overall)
    (GroupCounts(seen_a=1, ones_a=1, seen_b=1, ones_b=0), GroupCounts(seen_a=1, ones_a=0, seen_b=0, ones_b=0), 3)
    """

    length: int
    before: GroupCounts = GroupCounts()
    within: GroupCounts = GroupCounts()

    def __post_init__(self) -> None:
        if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length < 1:
            raise ShieldError(BAD_PERIOD.format(period=self.length))
        if total(self.within) >= self.length:
            raise ShieldError(BAD_STATE.format(length=self.length, within=self.within))

    def add(self, first: bool, decision: int) -> PeriodState:
        """The state after one more decision in group a (`first`) or group b, closing the period when it is full."""
        within = self.within.add(first, check_decision(decision))
        if total(within) == self.length:
            return PeriodState(self.length, merge(self.before, within))
        return PeriodState(self.length, self.before, within)

    @property
    def overall(self) -> GroupCounts:
        """Counts over the whole history."""
        return merge(self.before, self.within)


def _check(state: PeriodState, period: int) -> None:
    if state.length != period:
        raise ShieldError(WRONG_PERIOD.format(state=state.length, shield=period))


@dataclass(frozen=True)
class StaticFair:
    """FinHzn shield restarted every `period` candidates: φ ≤ `kappa` over each period's own counts.

    >>> shield = StaticFair(ArrivalModel.bernoulli(0.5, 0.75, 0.25), period=10, kappa=0.2)
    >>> state = PeriodState(10, GroupCounts(50, 50, 50, 0), GroupCounts(5, 1, 4, 1))
    >>> shield.decide(0, state, u=0.5, group="b").flipped
    False
    """

    model: ArrivalModel
    period: int
    kappa: float
    groups: tuple[str, str] = ("a", "b")
    empty: str = "vacuous"
    """How φ reads while a group is empty (see `FinHznShield`)."""
    shield: FinHznShield = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shield", FinHznShield(self.model, self.period, self.kappa, groups=self.groups, empty=self.empty))

    def start(self) -> PeriodState:
        """The state before any decision."""
        return PeriodState(self.period)

    def decide(self, decision: int, state: PeriodState, u: float, group: str, cost: float = 1.0) -> Verdict:
        """The verdict of this period's FinHzn shield, which sees only the counts within the period."""
        _check(state, self.period)
        return self.shield.decide(decision, state.within, u, group, cost)

    def next_state(self, state: PeriodState, verdict: Verdict) -> PeriodState:
        """The state after the verdict's shielded decision in its group."""
        return state.add(is_first(self.groups, verdict.group), verdict.shielded)


@dataclass(frozen=True)
class StaticBW:
    """Static-BW (Def. 5, Thm 4): a FinHzn shield restarted every `period` candidates that ends each N-balanced period
    (both groups with at least N = ⌈1/(u − l)⌉ members) with both groups' rates in the welfare bounds [l, u], u − l ≤ κ.

    Rates inside [l, u] in every period keep the whole history's rates there too (a rate over several periods is an
    average of theirs), so φ ≤ u − l ≤ κ over the history at every period end whenever every period is N-balanced
    (Assumption 1), which Static-Fair cannot promise. The bounds default to width κ around the model's overall
    proposed acceptance rate.

    >>> shield = StaticBW(ArrivalModel.bernoulli(0.5, 0.6, 0.4), period=20, kappa=0.2)
    >>> shield.welfare, shield.balance
    ((0.4, 0.6), 5)
    """

    model: ArrivalModel
    period: int
    kappa: float
    groups: tuple[str, str] = ("a", "b")
    welfare: tuple[float, float] | None = None
    empty: str = "vacuous"
    """How φ reads while a group is empty (see `FinHznShield`)."""
    shield: FinHznShield = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.welfare is None:
            weights = self.model.array().sum(axis=1)  # (a,0) (a,1) (b,0) (b,1)
            centre = float(weights[1] + weights[3])
            low = min(max(centre - self.kappa / 2, 0.0), 1.0 - self.kappa)
            object.__setattr__(self, "welfare", (round(low, 12), round(low + self.kappa, 12)))
        object.__setattr__(self, "shield", FinHznShield(self.model, self.period, self.kappa, groups=self.groups, welfare=self.welfare, empty=self.empty))

    @property
    def balance(self) -> int:
        """N: members each group needs in a period before the bounds bind."""
        return balance(self.welfare)  # type: ignore[arg-type]

    def start(self) -> PeriodState:
        """The state before any decision."""
        return PeriodState(self.period)

    def decide(self, decision: int, state: PeriodState, u: float, group: str, cost: float = 1.0) -> Verdict:
        """The verdict of this period's FinHzn shield with welfare bounds, which sees only the counts within the period."""
        _check(state, self.period)
        return self.shield.decide(decision, state.within, u, group, cost)

    def next_state(self, state: PeriodState, verdict: Verdict) -> PeriodState:
        """The state after the verdict's shielded decision in its group."""
        return state.add(is_first(self.groups, verdict.group), verdict.shielded)


@lru_cache(maxsize=4)
def _conditioned(model: ArrivalModel, period: int, kappa: float, groups: tuple[str, str], history: GroupCounts, empty: str) -> FinHznShield:
    """The FinHzn shield of one period given the history before it (cached: one synthesis per period)."""
    return FinHznShield(model, period, kappa, offset=history, groups=groups, empty=empty)


@dataclass(frozen=True)
class Dynamic:
    """FinHzn shield re-synthesized every `period` candidates on the history: φ ≤ `kappa` over all counts at each period end.

    >>> shield = Dynamic(ArrivalModel.bernoulli(0.5, 0.75, 0.25), period=10, kappa=0.2)
    >>> state = PeriodState(10, GroupCounts(50, 50, 50, 0), GroupCounts(5, 1, 4, 1))
    >>> shield.decide(0, state, u=0.5, group="b").reason
    'kept: no shield can end this period with φ ≤ 0.2 over the whole history (Assumption 2 fails); standing aside'
    """

    model: ArrivalModel
    period: int
    kappa: float
    groups: tuple[str, str] = ("a", "b")
    empty: str = "vacuous"
    """How φ reads while a group is empty (see `FinHznShield`)."""

    def __post_init__(self) -> None:
        _conditioned(self.model, self.period, self.kappa, self.groups, GroupCounts(), self.empty)  # the first period's; checks the parameters

    def start(self) -> PeriodState:
        """The state before any decision."""
        return PeriodState(self.period)

    def shield(self, state: PeriodState) -> FinHznShield:
        """The FinHzn shield of the current period, conditioned on the periods before it."""
        _check(state, self.period)
        return _conditioned(self.model, self.period, self.kappa, self.groups, state.before, self.empty)

    def assumption_holds(self, state: PeriodState) -> bool:
        """Whether some shield ends the current period with φ ≤ κ over the whole history, whatever arrives."""
        return math.isfinite(self.shield(state).expected_cost)

    def decide(self, decision: int, state: PeriodState, u: float, group: str, cost: float = 1.0) -> Verdict:
        """The verdict of the current period's conditioned shield, or the proposed decision kept when the assumption fails."""
        if self.assumption_holds(state):
            return self.shield(state).decide(decision, state.within, u, group, cost)
        after = merge(state.before, state.within.add(is_first(self.groups, group), check_decision(decision)))
        violation = total(state.within) + 1 == self.period and parity_gap(after, self.empty) > self.kappa
        reason = f"kept: no shield can end this period with φ ≤ {self.kappa} over the whole history (Assumption 2 fails); standing aside"
        return flip_verdict(decision, False, u, state.overall.gap, after.gap, violation, reason, group)

    def next_state(self, state: PeriodState, verdict: Verdict) -> PeriodState:
        """The state after the verdict's shielded decision in its group."""
        return state.add(is_first(self.groups, verdict.group), verdict.shielded)
