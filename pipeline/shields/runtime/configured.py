"""The shield a spec's `shield:` section describes, and what it guarantees, in one line for the operator (pure).

With the groups' raw rates the steepness is synthesized for the spec's λ over its horizon (or set by hand, and then
the same computation states the bound it gives); with the raw gap alone the shield is built as told and no bound is
computed; with neither, the adaptive shield estimates the rates from the raw decisions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fairstream.language.models import ShieldSpec
from fairstream.shields.energy.adaptive_bound import DecisionMakers, adaptive_bound
from fairstream.shields.energy.drift import TWO_GROUPS
from fairstream.shields.energy.functions import MonotoneEnergy
from fairstream.shields.energy.group_synthesis import Assessment, GroupProblem, assess, cached_synthesis, member
from fairstream.shields.energy.shields import AdaptiveGroupShield, GroupShield
from fairstream.shields.energy.spread import SpreadEnergy, SpreadProblem, SpreadShield, cached_spread, spread_bound
from fairstream.shields.energy.target import Target
from fairstream.shields.errors import ShieldError

ADAPTIVE_STEEPNESS = 1.0
"""The adaptive shield's member when the spec sets none: the steepest, which keeps the gap in S best while the estimates
are still wrong; its bound over `rates_within` is simulated, and λ refused where it does not hold."""

NO_RANGES = (
    "the adaptive shield estimates the rates, so it can keep λ = {lam:g} only for decision makers it is told of: give "
    "rates_within: [[low, high], [low, high]] (the ranges the groups' raw rates keep to), or the rates themselves"
)


@dataclass(frozen=True)
class ConfiguredShield:
    """The shield, the member it uses, and the assessment of its violations over [τ, T] when the rates are known."""

    shield: GroupShield | AdaptiveGroupShield | SpreadShield
    alpha: float
    origin: str
    assessment: Assessment | None = None
    method: str | None = None
    confidence: float | None = None

    def summary(self, spec: ShieldSpec) -> str:
        """One line: the member, why it was chosen, and its bound over [τ, T] if one was computed."""
        head = f"energy shield: member α = {self.alpha:.4f} ({self.origin})"
        if self.assessment is None:
            return f"{head}; no violation bound computed (give rates: [p_a, p_b] for one)"
        sure = "exact" if self.confidence is None else f"{self.confidence:.0%} confidence, {self.assessment.runs:,} simulated streams"
        if isinstance(self.shield, AdaptiveGroupShield):
            sure = f"{self.confidence:.0%} confidence, {self.assessment.runs:,} simulated streams per decision maker"
        gap, counted = ("TPR gap", "qualified decisions") if spec.criterion == "equal_opportunity" else ("gap", "decisions")
        if len(spec.groups) > 2:
            gap = f"spread of the {len(spec.groups)} groups' rates"
        return (
            f"{head}: P({gap} leaves S = {list(spec.running)} during {counted} {spec.burn_in}–{spec.horizon}) ≤ "
            f"{self.assessment.probability_bound:.4f} ({sure}; λ = {spec.max_violation:g})"
        )


def target_of(spec: ShieldSpec) -> Target:
    return Target(spec.burn_in, tuple(spec.running), tuple(spec.limit))  # type: ignore[arg-type]


def problem_of(spec: ShieldSpec) -> GroupProblem | None:
    """The decision maker the spec describes, when it gives the rates."""
    if spec.rates is None:
        return None
    return GroupProblem(spec.rates[0], spec.rates[1], spec.share, target_of(spec), spec.label_delay)


def configure_spread(spec: ShieldSpec) -> ConfiguredShield:
    """Three or more groups: the spread shield, its steepness synthesized (or set by hand) with a simulated bound."""
    target, groups = target_of(spec), tuple(spec.groups)
    shares = tuple(spec.shares) if spec.shares is not None else (1 / len(groups),) * len(groups)
    problem = SpreadProblem(tuple(spec.rates), shares, target)  # type: ignore[arg-type]
    if spec.steepness is None:
        found = cached_spread(problem, spec.max_violation, spec.horizon, spec.confidence)
        energy, probability, bound, origin = found.energy, found.probability, found.bound, f"synthesized for λ = {spec.max_violation:g}"
        runs = found.runs
    else:
        energy = SpreadEnergy(spec.steepness, target.running[1])
        probability, bound, runs = spread_bound(energy, problem, spec.horizon, spec.confidence)
        origin = "set by hand in the spec"
    assessment = Assessment(energy.alpha, probability, bound, math.nan, math.nan, math.nan, runs, None)
    return ConfiguredShield(SpreadShield(energy, target, groups, problem.rates, problem.shares), energy.alpha, origin, assessment, "monte carlo", spec.confidence)


def configure_adaptive(spec: ShieldSpec) -> ConfiguredShield:
    """The adaptive shield with its bound over the decision makers `rates_within` describes; λ refused where it does
    not hold (a `ShieldError` naming what the shield keeps)."""
    if spec.rates_within is None:
        raise ShieldError(NO_RANGES.format(lam=spec.max_violation))
    target, groups = target_of(spec), tuple(spec.groups)
    alpha = ADAPTIVE_STEEPNESS if spec.steepness is None else spec.steepness
    makers = DecisionMakers(spec.rates_within, spec.share, target)  # type: ignore[arg-type]
    found = adaptive_bound(alpha, makers, spec.horizon, confidence=spec.confidence, settle_margin=spec.settle_margin)
    found.require(spec.max_violation)
    shield = AdaptiveGroupShield(target, alpha, groups, settle_margin=spec.settle_margin)  # type: ignore[arg-type]
    assessment = Assessment(alpha, math.nan, found.bound, math.nan, math.nan, math.nan, found.runs, None)
    origin = f"adaptive: the raw rates are estimated online, bounded for rates within {[list(r) for r in spec.rates_within]}"
    return ConfiguredShield(shield, alpha, origin, assessment, "monte carlo", spec.confidence)


def configure(spec: ShieldSpec) -> ConfiguredShield:
    """The shield for the spec, synthesized when it gives the rates and no steepness."""
    if len(spec.groups) > 2:
        return configure_spread(spec)
    target, groups = target_of(spec), tuple(spec.groups)
    problem = problem_of(spec)
    if problem is None and spec.raw_gap is None:
        return configure_adaptive(spec)
    if problem is None:
        energy = MonotoneEnergy(spec.raw_gap, target.settled(spec.settle_margin), spec.steepness, domain=TWO_GROUPS)  # type: ignore[arg-type]
        return ConfiguredShield(GroupShield(energy, target, groups), spec.steepness, "set by hand for the raw gap")  # type: ignore[arg-type]
    if spec.steepness is None:
        result = cached_synthesis(problem, spec.max_violation, spec.horizon, "probability", spec.settle_margin, spec.confidence)
        shield = GroupShield(result.energy, target, groups, problem.placement)  # type: ignore[arg-type]
        return ConfiguredShield(shield, result.alpha, f"synthesized for λ = {spec.max_violation:g}", result.assessment, result.method, result.confidence)
    assessment, method = assess(problem, spec.steepness, spec.horizon, settle_margin=spec.settle_margin, confidence=spec.confidence)
    shield = GroupShield(member(problem, spec.steepness, spec.settle_margin), target, groups, problem.placement)  # type: ignore[arg-type]
    confidence = None if method == "exact" else spec.confidence
    return ConfiguredShield(shield, spec.steepness, "set by hand in the spec", assessment, method, confidence)
