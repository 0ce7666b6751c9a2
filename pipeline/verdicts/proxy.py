"""A part whose groups are known only as probabilities: each group's moment estimate with its interval, the
probability-weighted rate and the bounds beside it, and the verdict from the estimates' joint covariance (pure).

Confident verdicts use normal intervals at one fixed time; anytime verdicts use asymptotic confidence sequences, valid
at every evaluation at once as the trials grow. Both rest on a calibrated proxy and on outcomes that depend on the proxy
inputs only through the group (`ESTIMATE_ASSUMPTION`); the bounds need calibration alone (`BOUNDS_ASSUMPTION`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from fairstream.estimators.means import normal_width, sequence_width
from fairstream.estimators.proxy import ProxyLayout, ProxyRates, proxy_rates
from fairstream.estimators.proxy_bounds import proxy_bounds
from fairstream.estimators.proxy_calibration import calibration
from fairstream.verdicts.judge import PairLevel, PartVerdict, VerdictRule, judge
from fairstream.verdicts.parts import ANYTIME, FIXED_TIME, describe_interval, every_group_judged, part_body

ESTIMATE_ASSUMPTION = "calibrated proxy; outcomes depend on the proxy inputs only through the group"
BOUNDS_ASSUMPTION = "calibrated proxy"
UNESTIMABLE = "the groups' probabilities cannot be told apart yet (a group never likely, or two always alike)"

MAX_EXPONENT = 709.0
"""The largest x whose exp(x) is a float: a wider log-ratio interval is unbounded above."""


def proxy_part(numbers: list[float], layout: ProxyLayout, rule: VerdictRule, *, level: PairLevel, min_trials: int) -> dict[str, Any]:
    """The part's record from its cell: the sums of `layout`, then the trials counted. Its gap and ratio are of the
    moment estimates (there are no raw rates of groups nobody recorded); with self-reported groups on some trials, the
    calibration test and, where it fails, the estimates recalibrated on them."""
    trials = round(numbers[-1])
    sums = np.asarray(numbers[:-1], dtype=float)
    estimated = proxy_rates(layout, sums, trials)
    checked = calibration(layout, sums) if layout.calibration else None
    recalibrated = proxy_rates(layout, sums, trials, checked.recalibration) if checked and checked.held is False and checked.recalibration is not None else None
    bounds = proxy_bounds(layout, sums, rule.alpha) if trials > 0 else {}
    width = (lambda alpha: sequence_width(alpha, trials)) if rule.mode == "anytime" else normal_width
    groups: dict[str, Any] = {}
    estimates: dict[str, float] = {}
    for index, group in enumerate(layout.groups):
        cell: dict[str, Any] = {"estimate": None, "trials": 0}
        if group in bounds:
            cell["bounds"] = list(bounds[group])
        if estimated is not None:
            weight = float(estimated.weight[index])
            rate = float(estimated.rates[index])
            cell.update(estimate=rate, weight=weight, trials=round(weight))  # a moment estimate: a rare group's may leave [0, 1]
            if not math.isnan(estimated.weighted[index]):
                cell["weighted_rate"] = float(estimated.weighted[index])
            if recalibrated is not None:
                cell["recalibrated_estimate"] = float(recalibrated.rates[index])
            if rule.mode != "point":
                half = width(rule.alpha) * estimated.standard_error(group)
                cell.update(interval=[rate - half, rate + half], interval_of="estimate")
            if weight < min_trials:
                cell["below_floor"] = True
            else:
                estimates[group] = rate
        groups[group] = cell
    verdict = _verdict(rule, estimates, estimated, width, level, every_group_judged(rule, groups, estimates))
    body = part_body(groups, verdict, rule)
    del body["raw_gap"], body["raw_ratio"]  # the moments give estimates only: the gap and ratio are theirs
    body["groups_from"] = "probabilities"
    body["assumption"] = ESTIMATE_ASSUMPTION
    body["bounds_assumption"] = BOUNDS_ASSUMPTION
    outside = sorted(group for group, estimate in estimates.items() if not 0 <= estimate <= 1)
    if outside:
        body["outside_unit"] = outside
    if checked is not None:
        body["calibration"] = checked.record()
    if rule.mode != "point":
        describe_interval(body, verdict, "ratio" if rule.ratio else "gap")
        body["interval_validity"] = ANYTIME if rule.mode == "anytime" else FIXED_TIME
        if estimated is None:
            body["interval_reason"] = UNESTIMABLE
    return body


def _verdict(
    rule: VerdictRule, estimates: dict[str, float], estimated: ProxyRates | None, width: Callable[[float], float], level: PairLevel, complete: bool
) -> PartVerdict:
    """Point verdicts on the estimates; confident and anytime ones on intervals of the gap (or ratio) from the joint
    covariance, at each pair's level (a sequence's width for anytime ones)."""
    if rule.mode == "point" or estimated is None:
        return judge(VerdictRule(threshold=rule.threshold, hysteresis=rule.hysteresis, ratio=rule.ratio, pairs=rule.pairs), estimates)

    def difference(high: str, low: str, alpha: float) -> tuple[float, float]:
        gap = estimates[high] - estimates[low]
        half = width(alpha) * estimated.gap_error(high, low)
        return gap - half, gap + half

    def ratio(high: str, low: str, alpha: float) -> tuple[float, float]:
        error = estimated.log_ratio_error(high, low)
        if not math.isfinite(error) or estimates[high] <= 0 or estimates[low] <= 0:
            return 0.0, math.inf
        centre = math.log(estimates[low] / estimates[high])
        half = width(alpha) * error
        return math.exp(centre - half), math.exp(centre + half) if centre + half < MAX_EXPONENT else math.inf

    return judge(replace(rule, mode="confident"), estimates, level=level, difference=difference, ratio=ratio, complete=complete)


def proxy_lines(record: dict[str, Any]) -> list[str]:
    """What an estimate record of groups given as probabilities says against its own assumption, one line each: a
    calibration test that failed on the self-reported trials, and estimates outside [0, 1]."""
    lines = []
    for part, body in record["parts"].items():
        checked, outside = body.get("calibration") or {}, body.get("outside_unit")
        if checked.get("held") is False:
            worst = checked["worst"]
            lines.append(
                f"monitor {record['monitor']}, {part}: the proxy's probabilities are not calibrated on the {checked['sample']:,} "
                f"self-reported trials ({worst['statistic']}: mean {worst['mean']:+.4f}, beyond ±{worst['half_width']:.4f} at level "
                f"{checked['level']:g}); the estimates and verdicts assume calibration; recalibrated_estimate gives each group's "
                "rate from probabilities recalibrated on those trials"
            )
        if outside:
            lines.append(
                f"monitor {record['monitor']}, {part}: the estimated rate of {', '.join(outside)} lies outside [0, 1], a sign the "
                "proxy's probabilities are not calibrated for this population (give a truth field to test them)"
            )
    return lines

