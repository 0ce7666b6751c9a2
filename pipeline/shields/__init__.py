"""Runtime fairness shields (pure): they flip some raw decisions so that the running fairness value stays in a target.

Energy shields flip with a probability ζ(fairness) that grows away from a pivot; `synthesize` picks the least steep
member of a monotone family that meets a bound on violations.
"""

from fairstream.shields.energy.drift import (
    ONE_GROUP,
    TWO_GROUPS,
    bias,
    expected_interference,
    fixpoint,
    group_interference,
    mean_field,
    required_energy,
)
from fairstream.shields.energy.functions import STEEPNESS, Energy, Exponential, MonotoneEnergy, MonotoneFamily, Polynomial
from fairstream.shields.energy.shields import (
    AdaptiveCounts,
    AdaptiveGroupCounts,
    AdaptiveGroupShield,
    AdaptiveShield,
    Counts,
    EnergyShield,
    GroupCounts,
    GroupShield,
    Verdict,
    uniform,
)
from fairstream.shields.energy.synthesis import Synthesis, synthesize
from fairstream.shields.energy.target import Target
from fairstream.shields.energy.violations import Violations, tail_bound, violations
from fairstream.shields.errors import ShieldError

__all__ = [
    "ONE_GROUP",
    "STEEPNESS",
    "TWO_GROUPS",
    "AdaptiveCounts",
    "AdaptiveGroupCounts",
    "AdaptiveGroupShield",
    "AdaptiveShield",
    "Counts",
    "Energy",
    "EnergyShield",
    "Exponential",
    "GroupCounts",
    "GroupShield",
    "MonotoneEnergy",
    "MonotoneFamily",
    "Polynomial",
    "ShieldError",
    "Synthesis",
    "Target",
    "Verdict",
    "Violations",
    "bias",
    "expected_interference",
    "fixpoint",
    "group_interference",
    "mean_field",
    "required_energy",
    "synthesize",
    "tail_bound",
    "uniform",
    "violations",
]

from fairstream.shields.energy.group_violations import group_violations  # noqa: E402

__all__ += ["group_violations"]
