"""Delayed-impact constraints as ELF states them (Weber et al., "Enforcing Delayed-Impact Fairness Guarantees"): per
group, g = τ − E[outcome | group] ≤ 0 (or E[outcome | group] − τ ≤ 0), certified when a one-sided 1 − δ upper
bound on g is at most 0. A group whose bound cannot certify its constraint is in violation (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from fairstream.estimators.means import Mean, hoeffding_bounds, student_t_bounds


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

    def judge(self, mean: Mean, tau: float) -> dict[str, Any]:
        """The group's one-sided 1 − δ bound on its mean, the upper bound on g it gives, and whether g ≤ 0 is certified.

        >>> outcomes = Mean()
        >>> for x in (0.7, 0.8, 0.9, 0.8):
        ...     outcomes.update(x)
        >>> rule = ConstraintRule("m", "at_least", 0.05, "student_t")
        >>> {k: round(v, 4) if isinstance(v, float) else v for k, v in rule.judge(outcomes, 0.6).items()}
        {'bound': 0.7039, 'g_upper': -0.1039, 'certified': True}
        """
        sides = "lower" if self.at_least else "upper"
        if self.bound == "hoeffding":
            low, high = self.outcome_range  # type: ignore[misc]
            lower, upper = hoeffding_bounds(mean, self.delta, low, high, sides=sides)
        else:
            lower, upper = student_t_bounds(mean, self.delta, sides=sides)
        return self.certify(lower if self.at_least else upper, tau)

    def certify(self, bound: float, tau: float) -> dict[str, Any]:
        """What a one-sided bound on the mean (lower for `at_least`, upper for `at_most`) says of the constraint."""
        g_upper = tau - bound if self.at_least else bound - tau
        return {"bound": bound, "g_upper": g_upper, "certified": g_upper <= 0}
