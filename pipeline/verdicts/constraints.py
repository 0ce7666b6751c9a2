"""Delayed-impact constraints as ELF states them (Weber et al., "Enforcing Delayed-Impact Fairness Guarantees"): per
group, g = τ − E[outcome | group] ≤ 0 (or E[outcome | group] − τ ≤ 0), certified when a one-sided upper bound on g
holds at its level. A group whose bound cannot certify its constraint is in violation (pure).

τ is fixed, or each group's own mean over a baseline period. An estimated τ is a second sample, so it is bounded too:
the group's share of δ is split between the later mean and the baseline mean, and g ≤ 0 is certified only when the
later mean's bound clears the baseline's opposite bound; a τ taken as known would certify falsely far more often than
δ (18 % at δ = 0.1 with periods of equal length).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from fairstream.estimators.means import Mean, mean_bounds
from fairstream.verdicts.budget import Budget

if TYPE_CHECKING:
    from fairstream.estimators.sequence import MeanSequence


@dataclass(frozen=True)
class ConstraintRule:
    """One constraint of a monitor: its part name, direction, δ, bound, and τ (fixed) or the baseline's length."""

    part: str
    direction: Literal["at_least", "at_most"]
    delta: float
    bound: Literal["student_t", "hoeffding", "betting"]
    """The one-sided bound on the mean: fixed-time (Student t, Hoeffding) or, for anytime verdicts, the betting
    confidence sequence, which holds at every evaluation at once."""
    tau: float | None = None
    baseline: int | None = None
    """Milliseconds of event time from the first evaluation over which each group's own mean becomes its τ."""
    outcome_range: tuple[float, float] | None = None

    @property
    def at_least(self) -> bool:
        return self.direction == "at_least"

    def needs(self) -> int:
        """Outcomes a group needs before its bound exists: two for Student t (a variance), one for Hoeffding."""
        return 2 if self.bound == "student_t" else 1

    def one_sided(self, mean: Mean, delta: float, *, lower: bool) -> float:
        """A fixed-time one-sided bound on a mean at level 1 − δ (Hoeffding where the bound is betting: a baseline is a
        sample of fixed size once its period has ended)."""
        kind = "student_t" if self.bound == "student_t" else "hoeffding"
        bounds = mean_bounds(mean, delta, kind, self.outcome_range, sides="lower" if lower else "upper")
        return bounds[0] if lower else bounds[1]

    def judge(self, mean: Mean, tau: float, delta: float | None = None) -> dict[str, Any]:
        """The group's one-sided 1 − δ bound on its mean, the upper bound on g it gives, and whether g ≤ 0 is certified.

        >>> outcomes = Mean()
        >>> for x in (0.7, 0.8, 0.9, 0.8):
        ...     outcomes.update(x)
        >>> rule = ConstraintRule("m", "at_least", 0.05, "student_t")
        >>> {k: round(v, 4) if isinstance(v, float) else v for k, v in rule.judge(outcomes, 0.6).items()}
        {'bound': 0.7039, 'g_upper': -0.1039, 'certified': True}
        """
        return self.certify(self.one_sided(mean, self.delta if delta is None else delta, lower=self.at_least), tau)

    def certify(self, bound: float, tau: float) -> dict[str, Any]:
        """What a one-sided bound on the mean (lower for `at_least`, upper for `at_most`) says of the constraint."""
        g_upper = tau - bound if self.at_least else bound - tau
        return {"bound": bound, "g_upper": g_upper, "certified": g_upper <= 0}


def constraint_part(
    rule: ConstraintRule,
    sums: Mapping[str, list[float]],
    baseline: Mapping[str, list[float]] | None,
    *,
    min_trials: int,
    budget: Budget,
    sequences: Mapping[tuple[str, str], MeanSequence] | None = None,
) -> dict[str, Any]:
    """Each group's mean outcome (after the baseline, for a baseline constraint), its τ, its one-sided bound at the
    group's share of δ (`budget`) and whether that bound certifies the constraint; the part is violated while some
    judged group is not certified. `sequences` (anytime verdicts) hold each group's confidence sequence."""
    groups: dict[str, Any] = {}
    failing: list[str] = []
    for group, cell in sorted(sums.items()):
        total, squares, trials = cell
        tau: float | None = rule.tau
        before = None
        if rule.baseline is not None:
            before = None if baseline is None else baseline.get(group)
            if before is None or before[2] <= 0:
                tau = None  # no baseline yet, or none for this group: nothing to compare with
            else:
                tau = before[0] / before[2]
                total, squares, trials = total - before[0], squares - before[1], trials - before[2]
        if trials <= 0:
            continue
        entry: dict[str, Any] = {"estimate": total / trials, "trials": round(trials), "tau": tau}
        groups[group] = entry
        if trials < max(rule.needs(), min_trials) or (before is not None and before[2] < rule.needs()):
            entry["below_floor"] = True
            continue
        if tau is None:
            continue
        sequence = None if sequences is None else sequences.get((rule.part, group))
        if sequences is not None and sequence is None:
            continue  # no outcome of the group has reached the sequence in opening order yet
        delta = budget.share(group)
        entry["delta"] = delta
        later_delta = delta / 2 if before is not None else delta
        if sequence is not None:
            lower, upper = sequence.bounds(later_delta)
            bound = lower if rule.at_least else upper
        else:
            bound = rule.one_sided(Mean.from_sums(total, squares, trials), later_delta, lower=rule.at_least)
        if before is not None:
            tau_bound = rule.one_sided(Mean.from_sums(*before), delta / 2, lower=not rule.at_least)
            entry["tau_bound"] = tau_bound
            entry.update(rule.certify(bound, tau_bound))
        else:
            entry.update(rule.certify(bound, tau))
        if not entry["certified"]:
            failing.append(group)
    judged = [group for group, entry in groups.items() if "certified" in entry]
    return {
        "constraint": {"direction": rule.direction, "tau": rule.tau, "baseline": rule.baseline, "delta": rule.delta, "bound": rule.bound},
        "groups": groups,
        "failing": failing,
        "violated": bool(failing) if judged else None,
        "clear": not failing if judged else None,
    }
