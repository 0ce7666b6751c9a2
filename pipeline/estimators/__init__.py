"""Estimators of per-group rates, means and gaps, with intervals and an anytime-valid gap test (pure)."""

from fairstream.estimators.betting import GapBet, RatioBet, log_wealth_paths
from fairstream.estimators.intervals import (
    INTERVALS,
    IntervalKind,
    beta_credible,
    beta_difference,
    clopper_pearson,
    clopper_pearson_difference,
    newcombe_difference,
    wilson,
)
from fairstream.estimators.means import BenefitRate, Mean, hoeffding_bounds, student_t_bounds
from fairstream.estimators.pairing import RatioPairs
from fairstream.estimators.rate import Rate, map_estimate

__all__ = [
    "INTERVALS",
    "BenefitRate",
    "GapBet",
    "IntervalKind",
    "Mean",
    "Rate",
    "RatioBet",
    "RatioPairs",
    "beta_credible",
    "beta_difference",
    "clopper_pearson",
    "clopper_pearson_difference",
    "hoeffding_bounds",
    "log_wealth_paths",
    "map_estimate",
    "newcombe_difference",
    "student_t_bounds",
    "wilson",
]
