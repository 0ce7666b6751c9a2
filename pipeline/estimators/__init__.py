"""Estimators of per-group rates, means and gaps, with intervals and an anytime-valid gap test (pure).

Each name is imported from its module on first use, so that a monitor of point estimates starts without numpy."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_MODULE_OF = {
    "GapBet": "betting",
    "RatioBet": "betting",
    "log_wealth_paths": "betting",
    "INTERVALS": "intervals",
    "IntervalKind": "intervals",
    "beta_credible": "intervals",
    "beta_difference": "intervals",
    "clopper_pearson": "intervals",
    "clopper_pearson_difference": "intervals",
    "newcombe_difference": "intervals",
    "wilson": "intervals",
    "BenefitRate": "means",
    "Mean": "means",
    "hoeffding_bounds": "means",
    "student_t_bounds": "means",
    "RatioPairs": "pairing",
    "Rate": "rate",
    "map_estimate": "rate",
}

__all__ = [
    "BenefitRate",
    "GapBet",
    "INTERVALS",
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


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
