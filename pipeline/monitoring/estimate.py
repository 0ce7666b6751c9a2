"""A monitor's estimate record body: the metric, the prior, the trials counted, each part, and what the counts say of
the groups beside the verdicts (untracked, marginal, unseen and unlisted groups; the aggregates) (pure)."""

from __future__ import annotations

from typing import Any

from fairstream.estimators.rate import Rate
from fairstream.monitoring.config import MonitorConfig
from fairstream.monitoring.counts import Counts, Noted
from fairstream.records.timefmt import format_instant
from fairstream.trials.outcomes import MARGINAL, UNLABELED, UNLISTED
from fairstream.verdicts.tracked import unlisted_counts, unseen_groups


def estimate_body(
    config: MonitorConfig, counts: Counts, parts: dict[str, Any], prior: float | None, instant: int, noted: Noted | None = None, windows: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The body of the estimate record of an evaluation at `instant` with these `parts`; `noted`: the reports' notes as
    they stood then, where they have moved since; `windows`: the values of the windows over raw events."""
    first_opening, unfinished, evicted = noted if noted is not None else counts.noted()
    summary: dict[str, Any] = {
        "metric": config.metric,
        "verdict": config.rule.mode,
        "prior": prior,
        "confidence": config.estimation.confidence,
        "trials": {
            "closed": counts.closed,
            "incomplete": counts.incomplete + sum(rate.trials for part, groups in counts.rates.items() if part.startswith(UNLABELED) for rate in groups.values()),
            **({"evicted": evicted} if evicted else {}),
            **({"unfinished": unfinished} if unfinished else {}),
            **({"open": counts.openings - counts.closed} if config.counting.open_trials else {}),
        },
        "parts": parts,
    }
    if first_opening is not None and first_opening <= instant:  # every event up to the instant has been received
        summary["decisions"] = {"first": format_instant(first_opening)}
    untracked = counts.groups.report()
    if untracked:
        summary["untracked"] = untracked
    marginals = published_marginals(counts.rates, config.publishing.min_cell)
    if marginals:
        summary["marginals"] = marginals
    if config.counting.listed_groups is not None:
        unseen = unseen_groups(config.counting.listed_groups, counts.groups) if config.proxy is None else unlikely_groups(parts)
        unlisted = unlisted_counts(counts.totals)
        if unseen:
            summary["unseen_groups"] = unseen
        if unlisted:
            summary["unlisted_groups"] = unlisted
    if config.rule.mode != "point":
        summary["alpha"] = config.rule.alpha
        summary["family"] = config.judging.family
    if config.judging.detection is not None:
        summary["verdict"] = "change"
        summary["detection"] = {"shift": config.judging.detection.shift, "arl": config.judging.detection.arl}
    if windows is not None:
        summary["windows"] = windows
    aggregates = {name: value for name, value in sorted(counts.totals.items()) if not name.startswith(UNLISTED)}
    if aggregates:
        summary["aggregates"] = aggregates
    return summary


def published_marginals(rates: dict[str, dict[str, Rate]], min_cell: int) -> dict[str, dict[str, dict[str, Any]]]:
    """Per variable of an intersectional group, per part, each value's hits and trials counted from its own trials (a
    cell below `min_cell` suppressed, as everywhere)."""
    marginals: dict[str, dict[str, dict[str, Any]]] = {}
    for name, groups in rates.items():
        if not name.startswith(MARGINAL):
            continue
        variable, part = name[len(MARGINAL) :].split("\x1f", 1)
        marginals.setdefault(variable, {})[part] = {
            value: {"hits": rate.hits, "trials": rate.trials} if rate.trials >= min_cell else {"hits": None, "trials": None, "suppressed": True}
            for value, rate in sorted(groups.items())
            if rate.trials > 0
        }
    return marginals


def unlikely_groups(parts: dict[str, Any]) -> list[str]:
    """The listed groups no trial has given a probability above 0 in any part (the probabilities' `unseen_groups`)."""
    weights: dict[str, float] = {}
    for body in parts.values():
        for group, cell in body["groups"].items():
            seen = 1.0 if cell.get("suppressed") else cell.get("weight") or 0.0  # a suppressed cell held trials
            weights[group] = weights.get(group, 0.0) + seen
    return sorted(group for group, weight in weights.items() if weight <= 0)
