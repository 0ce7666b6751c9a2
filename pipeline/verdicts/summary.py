"""Condense a run's records into what a person reads first: final per-group estimates and when each pair of groups first
violated, by the verdict the monitor itself reached (point, confident or anytime; on the gap or on the ratio)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

RATIO_METRICS = frozenset({"disparate_impact"})
"""Metrics whose verdict bounds the ratio min / max of the group rates from below, not their gap max − min from above."""


def tests_ratio(metric: str) -> bool:
    """Whether `metric`'s verdict is on the ratio between groups (see `RATIO_METRICS`)."""
    return metric in RATIO_METRICS


@dataclass(frozen=True)
class GroupRate:
    part: str
    group: str
    estimate: float | None
    hits: int | None
    trials: int | None
    suppressed: bool = False
    """The cell had too few trials to publish (`publish.min_cell`): estimate and counts withheld."""


@dataclass(frozen=True)
class FirstViolation:
    """The first evaluation whose verdict named `high` and `low` as the violating pair of `part`."""

    part: str
    high: str
    low: str
    event_time: str
    value: float
    """The measure the verdict tested then: the gap, or for a ratio metric the ratio."""
    evidence: str | None = None
    """What a confident or anytime verdict rested on: the interval's bound beyond the threshold, or the test's log-wealth."""


def final_rates(estimates: list[dict[str, Any]]) -> list[GroupRate]:
    """Per part and group, the last evaluation's estimate and counts."""
    if not estimates:
        return []
    parts = estimates[-1]["parts"]
    return [
        GroupRate(part, group, cell["estimate"], cell.get("hits"), cell.get("trials"), cell.get("suppressed", False))
        for part in sorted(parts)
        for group, cell in parts[part]["groups"].items()
    ]


def first_violations(estimates: Iterable[dict[str, Any]]) -> list[FirstViolation]:
    """For every part and pair of groups, the first evaluation whose verdict was violated with that pair, in time order:
    the dates the monitor's violation alerts carry, whatever its verdict mode."""
    found: dict[tuple[str, str, str], FirstViolation] = {}
    for record in estimates:
        ratio = tests_ratio(record["metric"])
        for part, body in record["parts"].items():
            if not body.get("violated") or not body.get("pair"):
                continue
            high, low = body["pair"]
            if (part, high, low) not in found:
                value = body["ratio"] if ratio else body["gap"]
                found[(part, high, low)] = FirstViolation(part, high, low, record["event_time"], value, _evidence(body, ratio))
    return sorted(found.values(), key=lambda v: (v.event_time, v.part, v.high, v.low))


def _evidence(body: dict[str, Any], ratio: bool) -> str | None:
    """The bound or the test statistic a non-point verdict rested on, as printed."""
    if body.get("log_wealth") is not None:
        return f"log-wealth {body['log_wealth']:.2f}"
    interval = body.get("interval")
    if interval:
        return f"upper bound {interval[1]:.4f}" if ratio else f"lower bound {interval[0]:.4f}"
    return None


def dead_letter_counts(dead_letters: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for letter in dead_letters:
        counts[letter["reason"]] = counts.get(letter["reason"], 0) + 1
    return dict(sorted(counts.items()))
