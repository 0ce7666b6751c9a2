"""Equal opportunity shields: the fairness value is the gap in true-positive rates, TPR_a − TPR_b, the acceptance rates
of the shielded decisions among the individuals whose true label turns out to be 1 (the qualified).

A shield decides before the label is known; the label arrives afterwards (here: before the next decision) and only a
qualified individual enters the counts. So every shield is the demographic-parity one applied to the qualified:

- `OpportunityShield` wraps a two-group energy or naive shield: it decides as the wrapped shield does from the counts
  over the qualified, and `next_state(state, verdict, label)` counts the decision only when the label is 1. Since a
  flip does not depend on the label, the shielded acceptance rate among the qualified of group g is the wrapped rule
  applied to the raw TPR of g: the energy shield's theory (limit point, synthesis) holds with p_g the raw TPRs and π
  the share of group a among the qualified, t counting qualified individuals.
- `OpportunityFinHzn` (the fairness-shield paper's FinHzn for EqOpp) and `OpportunityPeriodic` (Static-Fair,
  Static-BW and Dynamic on top of it) are in `opportunity_finhzn`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fairstream.shields.checks import check_decision
from fairstream.shields.energy.shields import GroupCounts, Verdict


class ParityShield(Protocol):
    """A two-group shield over `GroupCounts`: the energy shields and the naive parity shield."""

    def start(self) -> GroupCounts: ...

    def decide(self, decision: int, state: GroupCounts, u: float, group: str) -> Verdict: ...

    def next_state(self, state: GroupCounts, verdict: Verdict) -> GroupCounts: ...


@dataclass(frozen=True)
class OpportunityShield:
    """A demographic-parity shield run on the qualified only: equal opportunity.

    `decide` sees the counts over the qualified so far; `verdict.after` is the TPR gap if this individual turns out
    qualified. `next_state(state, verdict, label)` adds the shielded decision when the label is 1.

    >>> from fairstream.lab.periodic.naive import NaiveParityShield
    >>> shield = OpportunityShield(NaiveParityShield((-0.1, 0.1)))
    >>> state = GroupCounts(10, 8, 10, 7)
    >>> verdict = shield.decide(1, state, u=0.5, group="a")   # TPR gap 0.1 would become 9/11 − 0.7 > 0.1
    >>> verdict.shielded, shield.next_state(state, verdict, label=0) == state
    (0, True)
    """

    inner: ParityShield

    def start(self) -> GroupCounts:
        return self.inner.start()

    def decide(self, decision: int, state: GroupCounts, u: float, group: str) -> Verdict:
        return self.inner.decide(decision, state, u, group)

    def next_state(self, state: GroupCounts, verdict: Verdict, label: int) -> GroupCounts:
        """The counts once the label is known: the decision counts only for a qualified individual."""
        return self.inner.next_state(state, verdict) if check_decision(label) else state
