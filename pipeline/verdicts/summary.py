"""Condense a run's records into what a person reads first: final per-group rates and when each pair of groups first violated."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from typing import Any


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
    """The first evaluation at which the estimates of `high` and `low` differed by more than the threshold."""

    part: str
    high: str
    low: str
    event_time: str
    gap: float


def final_rates(estimates: list[dict[str, Any]]) -> list[GroupRate]:
    """Per part and group, the last evaluation's estimate and counts."""
    if not estimates:
        return []
    parts = estimates[-1]["parts"]
    return [
        GroupRate(part, group, cell["estimate"], cell.get("hits"), cell["trials"], cell.get("suppressed", False))
        for part in sorted(parts)
        for group, cell in parts[part]["groups"].items()
    ]


def first_violations(estimates: Iterable[dict[str, Any]]) -> list[FirstViolation]:
    """For every part and pair of groups, the first evaluation where their gap exceeded the threshold, in time order."""
    found: dict[tuple[str, str, str], FirstViolation] = {}
    for record in estimates:
        for part, body in record["parts"].items():
            values = {g: c["estimate"] for g, c in body["groups"].items() if c["estimate"] is not None}
            for a, b in combinations(sorted(values), 2):
                if (part, a, b) in found or abs(values[a] - values[b]) <= body["threshold"]:
                    continue
                high, low = (a, b) if values[a] >= values[b] else (b, a)
                found[(part, a, b)] = FirstViolation(part, high, low, record["event_time"], values[high] - values[low])
    return sorted(found.values(), key=lambda v: (v.event_time, v.part, v.high, v.low))


def dead_letter_counts(dead_letters: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for letter in dead_letters:
        counts[letter["reason"]] = counts.get(letter["reason"], 0) + 1
    return dict(sorted(counts.items()))
