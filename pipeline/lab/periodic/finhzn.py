"""The FinHzn shield of the fairness-shield paper: over a horizon of T candidates, flip the least expected cost of
decisions such that the demographic-parity gap φ = |r_a − r_b| is at most κ after the T-th candidate, on every run.
As in the paper, φ = 0 while either group is empty (`parity_gap`).

Synthesis is dynamic programming over counters (Def. 1, Eqs. 3–4, Thm 1). The value v(μ) of the counts μ after t
candidates is the least expected flip cost still to pay:

    v(μ) = 0 if φ(μ) ≤ κ, else ∞                                          (t = T)
    v(μ) = Σ_{g,r,c} θ(g,r,c) · min(v(μ + (g,r)), c + v(μ + (g,1−r)))     (t < T)

where θ is the `ArrivalModel`. A group whose successors are both ∞ makes v(μ) = ∞ even when θ gives it weight 0, so a
finite value means that some choice of decisions reaches φ ≤ κ whatever groups and proposals arrive: a run that starts at
a finite value ends fair, and without `offset` the root is finite, as rejecting everyone gives φ = 0. The counts after t
candidates are (seen_a, ones_a, ones_b), about T⁴/24 states over the horizon (4.4 M for T = 100); the table is
filled one layer of t at a time with numpy, and `decide` is two lookups: keep the proposed r when
v(μ + (g,r)) ≤ c + v(μ + (g,1−r)), else flip (ties kept). The cost c is the candidate's own; the table averages over the
cost levels of θ.

`offset` adds counts from before the horizon to the final gap: the history a Dynamic periodic shield conditions on.
`empty` says how the gap reads when a group has no member: "vacuous" (φ = 0, the paper's text) or "zero" (that group's
rate read as 0, as the authors' code computes it, so a horizon without a member of one group must end with the other's
rate ≤ κ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fairstream.lab.periodic.arrivals import ArrivalModel
from fairstream.lab.periodic.baseline import check_cost, check_decision, check_groups, flip_verdict, is_first, merge, total
from fairstream.shields.energy.shields import GroupCounts, Verdict
from fairstream.shields.energy.states import layer as _layer
from fairstream.shields.energy.states import rank as _rank
from fairstream.shields.errors import ShieldError

BAD_HORIZON = "horizon T must be an integer ≥ 1; got {horizon!r}"
BAD_KAPPA = "threshold κ must lie in [0, 1]; got {kappa!r}; φ is a difference of two rates"
BAD_WELFARE = "welfare bounds [l, u] need 0 ≤ l < u ≤ 1 and u − l ≤ κ = {kappa}; got {welfare}"
BAD_EMPTY = "empty must be 'vacuous' (φ = 0 while a group is empty) or 'zero' (an empty group's rate is 0); got {empty!r}"
EMPTY = ("vacuous", "zero")
PAST_HORIZON = (
    "no candidate is left in the horizon T = {horizon}; got counts of {total} candidates; hint: use a periodic shield on longer streams"
)


def parity_gap(counts: GroupCounts, empty: str = "vacuous") -> float:
    """φ = |r_a − r_b| of the fairness-shield paper: 0 while either group is empty (parity is vacuous then), or with
    `empty="zero"` an empty group's rate read as 0.

    >>> parity_gap(GroupCounts(4, 3, 4, 1)), parity_gap(GroupCounts(4, 3, 0, 0)), parity_gap(GroupCounts(4, 3, 0, 0), "zero")
    (0.5, 0.0, 0.75)
    """
    if empty == "vacuous" and (counts.seen_a == 0 or counts.seen_b == 0):
        return 0.0
    return abs(counts.gap)


def balance(welfare: tuple[float, float]) -> int:
    """N = ⌈1/(u − l)⌉: the members each group needs in a period before the welfare bounds [l, u] bind (Assumption 1)."""
    low, high = welfare
    return math.ceil(1 / (high - low) - 1e-9)


def group_rates(seen_a, ones_a, seen_b, ones_b, empty: str = "vacuous") -> tuple[np.ndarray, np.ndarray]:
    """Both groups' rates over arrays of counts: 0 for both while either group is empty ("vacuous", so the gap is 0),
    or ("zero") 0 for an empty group alone.

    >>> [r.tolist() for r in group_rates(np.array([4, 4]), np.array([3, 3]), np.array([4, 0]), np.array([1, 0]), "zero")]
    [[0.75, 0.75], [0.25, 0.0]]
    """
    counted = ((seen_a > 0) & (seen_b > 0),) * 2 if empty == "vacuous" else (seen_a > 0, seen_b > 0)
    rate_a = np.divide(ones_a, seen_a, out=np.zeros(len(seen_a)), where=counted[0])
    rate_b = np.divide(ones_b, seen_b, out=np.zeros(len(seen_b)), where=counted[1])
    return rate_a, rate_b


def fair_mask(seen_a, ones_a, seen_b, ones_b, kappa: float, welfare: tuple[float, float] | None = None, empty: str = "vacuous") -> np.ndarray:
    """0 where the counts end a horizon fairly, else ∞: `parity_gap` ≤ κ (the same float operations, so the same answers).

    With `welfare` = [l, u] (Static-BW, Def. 5): 0 where the counts are not N-balanced (a group has fewer than N members)
    or both groups' rates lie in [l, u], else ∞."""
    rate_a, rate_b = group_rates(seen_a, ones_a, seen_b, ones_b, empty)
    if welfare is not None:
        low, high = welfare
        least = balance(welfare)
        inside = (rate_a >= low) & (rate_a <= high) & (rate_b >= low) & (rate_b <= high)
        return np.where((seen_a < least) | (seen_b < least) | inside, 0.0, np.inf)
    return np.where(np.abs(rate_a - rate_b) <= kappa, 0.0, np.inf)


def _terminal(horizon: int, kappa: float, offset: GroupCounts, welfare: tuple[float, float] | None = None, empty: str = "vacuous") -> np.ndarray:
    """`fair_mask` over every count after the horizon, the offset added."""
    seen_a, ones_a, ones_b = _layer(horizon)
    seen_b = horizon - seen_a + offset.seen_b
    return fair_mask(seen_a + offset.seen_a, ones_a + offset.ones_a, seen_b, ones_b + offset.ones_b, kappa, welfare, empty)


def _group_cost(accept: np.ndarray, reject: np.ndarray, weights: np.ndarray, row: int, costs: np.ndarray) -> np.ndarray:
    """Σ_{r,c} θ(g,r,c) · min(keep, c + flip) for the group whose rows (g,0), (g,1) start at `row`."""
    keep_reject = np.minimum(reject[:, None], costs + accept[:, None])
    keep_accept = np.minimum(accept[:, None], costs + reject[:, None])
    return (keep_reject * weights[row] + keep_accept * weights[row + 1]).sum(axis=1)


def value_table(
    model: ArrivalModel, horizon: int, kappa: float, offset: GroupCounts, welfare: tuple[float, float] | None = None, empty: str = "vacuous"
) -> tuple[np.ndarray, ...]:
    """v over every layer t = 0 … T, each a flat array in `_rank` order."""
    weights, costs = model.array(), np.array(model.costs)
    values = [_terminal(horizon, kappa, offset, welfare, empty)]
    for t in range(horizon - 1, -1, -1):
        seen_a, ones_a, ones_b = _layer(t)
        later = values[-1]
        accept_a, reject_a = (
            later[_rank(t + 1, seen_a + 1, ones_a + 1, ones_b)],
            later[_rank(t + 1, seen_a + 1, ones_a, ones_b)],
        )
        accept_b, reject_b = later[_rank(t + 1, seen_a, ones_a, ones_b + 1)], later[_rank(t + 1, seen_a, ones_a, ones_b)]
        feasible = np.isfinite(np.minimum(accept_a, reject_a)) & np.isfinite(np.minimum(accept_b, reject_b))
        value = np.full(len(seen_a), np.inf)
        value[feasible] = _group_cost(accept_a[feasible], reject_a[feasible], weights, 0, costs) + _group_cost(
            accept_b[feasible], reject_b[feasible], weights, 2, costs
        )
        values.append(value)
    return tuple(reversed(values))


def check_problem(horizon: int, kappa: float, welfare: tuple[float, float] | None, groups: tuple[str, str], empty: str = "vacuous") -> None:
    """A `ShieldError` unless the horizon, the threshold, the welfare bounds, the pair of groups and the reading of an
    empty group make a FinHzn problem."""
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise ShieldError(BAD_HORIZON.format(horizon=horizon))
    if not 0 <= kappa <= 1:
        raise ShieldError(BAD_KAPPA.format(kappa=kappa))
    if welfare is not None and not (0 <= welfare[0] < welfare[1] <= 1 and welfare[1] - welfare[0] <= kappa + 1e-12):
        raise ShieldError(BAD_WELFARE.format(welfare=welfare, kappa=kappa))
    if empty not in EMPTY:
        raise ShieldError(BAD_EMPTY.format(empty=empty))
    check_groups(groups)


@dataclass(frozen=True)
class FinHznShield:
    """Cost-optimal shield that ends a horizon of `horizon` candidates with φ ≤ `kappa`, for arrivals drawn from `model`.

    `groups` names group a and group b; `before` and `after` in a verdict are D = r_a − r_b over `offset` and the counts
    (`GroupCounts.gap`), and `violation` says whether the horizon ends with φ > κ, which the shield rules out.

    >>> shield = FinHznShield(ArrivalModel.bernoulli(0.5, 0.9, 0.1), horizon=20, kappa=0.2)
    >>> round(shield.expected_cost, 3)
    5.803
    >>> verdict = shield.decide(1, GroupCounts(9, 3, 10, 1), u=0.5, group="a")
    >>> verdict.shielded, verdict.reason
    (0, 'flipped: keeping it leaves no way to end the horizon of 20 with φ ≤ 0.2')
    """

    model: ArrivalModel
    horizon: int
    kappa: float
    offset: GroupCounts = GroupCounts()
    groups: tuple[str, str] = ("a", "b")
    welfare: tuple[float, float] | None = None
    """Static-BW's welfare bounds [l, u] (u − l ≤ κ): the horizon must end with both rates in [l, u] when N-balanced."""
    empty: str = "vacuous"
    """How φ reads while a group is empty: "vacuous" (0) or "zero" (its rate is 0)."""
    values: tuple[np.ndarray, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_problem(self.horizon, self.kappa, self.welfare, self.groups, self.empty)
        object.__setattr__(self, "values", value_table(self.model, self.horizon, self.kappa, self.offset, self.welfare, self.empty))

    def start(self) -> GroupCounts:
        """The counts before the first candidate of the horizon."""
        return GroupCounts()

    @property
    def expected_cost(self) -> float:
        """Least expected total flip cost over the horizon under θ; ∞ when no shield can guarantee φ ≤ κ from `offset`."""
        return self.value(self.start())

    def value(self, state: GroupCounts) -> float:
        """v(state): least expected flip cost still to pay from `state` (∞ when φ ≤ κ can no longer be guaranteed)."""
        t = total(state)
        if t > self.horizon:
            raise ShieldError(PAST_HORIZON.format(total=t, horizon=self.horizon))
        return float(self.values[t][_rank(t, state.seen_a, state.ones_a, state.ones_b)])

    def decide(self, decision: int, state: GroupCounts, u: float, group: str, cost: float = 1.0) -> Verdict:
        """Shield one proposed decision for a member of `group`, whose flip costs `cost`, given the counts within the horizon."""
        t = total(state)
        if t >= self.horizon:
            raise ShieldError(PAST_HORIZON.format(total=t, horizon=self.horizon))
        first, proposed, cost = is_first(self.groups, group), check_decision(decision), check_cost(cost)
        keep, flip = self.value(state.add(first, proposed)), self.value(state.add(first, 1 - proposed))
        flips = keep > cost + flip
        after = merge(self.offset, state.add(first, 1 - proposed if flips else proposed))
        violation = t + 1 == self.horizon and parity_gap(after, self.empty) > self.kappa
        goal = f"end the horizon of {self.horizon} with φ ≤ {self.kappa}" if self.welfare is None else f"end the horizon of {self.horizon} with both rates in {list(self.welfare)}"
        if not flips and math.isinf(keep):
            reason = f"kept: no decision can {goal} from these counts"
        elif not flips:
            reason = f"kept: expected cost to go {keep:.4g} ≤ flip cost {cost:.4g} + {flip:.4g}"
        elif math.isinf(keep):
            reason = f"flipped: keeping it leaves no way to {goal}"
        else:
            reason = f"flipped: flip cost {cost:.4g} + expected cost to go {flip:.4g} < {keep:.4g} when kept"
        return flip_verdict(proposed, flips, u, merge(self.offset, state).gap, after.gap, violation, reason, group)

    def next_state(self, state: GroupCounts, verdict: Verdict) -> GroupCounts:
        """The counts after the verdict's shielded decision in its group."""
        return state.add(is_first(self.groups, verdict.group), verdict.shielded)
