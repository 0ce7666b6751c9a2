"""Condense a run's records into what a person reads first: final per-group estimates and when each pair of groups first
violated, by the verdict the monitor itself reached (point, confident or anytime; on the gap or on the ratio)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fairstream.spec.metric import tests_ratio


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
    value: float | None
    """The measure the verdict tested then: the gap, for a ratio metric the ratio, for a delayed-impact constraint the
    upper bound on g (τ − mean, or mean − τ), which is above 0 when the constraint is not certified."""
    evidence: str | None = None
    """What a confident or anytime verdict rested on: the interval's bound beyond the threshold, or the test's log-wealth."""


def latest_with_groups(estimates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last evaluation that published an estimate of any group: the last one, unless a window had emptied (or held
    only cells too small to publish) by the end of the input."""
    return next((record for record in reversed(estimates) if any(_published(body) for body in record["parts"].values())), None)


def _published(part: dict[str, Any]) -> bool:
    return any(not cell.get("suppressed", False) for cell in part["groups"].values())


def final_rates(record: dict[str, Any]) -> list[GroupRate]:
    """Per part and group, an evaluation's estimate and counts."""
    parts = record["parts"]
    return [
        GroupRate(part, group, cell["estimate"], cell.get("hits"), cell.get("trials"), cell.get("suppressed", False))
        for part in sorted(parts)
        for group, cell in parts[part]["groups"].items()
    ]


def first_violations(estimates: Iterable[dict[str, Any]]) -> list[FirstViolation]:
    """For every part and pair of groups, the first evaluation whose verdict was violated with that pair, in time order:
    the dates the monitor's violation alerts carry, whatever its verdict mode."""
    found: dict[tuple[str, ...], FirstViolation] = {}
    for record in estimates:
        ratio = tests_ratio(record["metric"])
        for part, body in record["parts"].items():
            if "constraint" in body:
                for group in body["failing"]:
                    _first_failure(found, record["event_time"], part, group, body)
                continue
            if not body.get("violated") or not body.get("pair"):
                continue
            high, low = body["pair"]
            if (part, high, low) not in found:
                value = body[_rested_on(record, ratio)]
                found[(part, high, low)] = FirstViolation(part, high, low, record["event_time"], value, _evidence(body, ratio))
    return sorted(found.values(), key=lambda v: (v.event_time, v.part, v.high, v.low))


def _first_failure(found: dict[tuple[str, ...], FirstViolation], event_time: str, part: str, group: str, body: dict[str, Any]) -> None:
    """A delayed-impact constraint `group` failed to certify: the row names τ and the group (higher first), the upper
    bound on g = τ − mean (or mean − τ) then, and the bound on the mean against τ."""
    entry, at_least = body["groups"][group], body["constraint"]["direction"] == "at_least"
    if entry.get("suppressed"):  # a cell too small to publish: only that it failed is known
        tau, value, evidence = "τ", None, None
    else:
        side = "lower" if at_least else "upper"
        tau, value, evidence = f"τ {entry['tau']:.4g}", entry["g_upper"], f"mean {entry['estimate']:.4f}, {side} bound {entry['bound']:.4f}"
    high, low = (tau, group) if at_least else (group, tau)
    if (part, group) not in found:
        found[(part, group)] = FirstViolation(part, high, low, event_time, value, evidence)


def _rested_on(record: dict[str, Any], ratio: bool) -> str:
    """The gap (or ratio) a verdict rests on: the MAP one for point verdicts, the raw one for the tests of the others."""
    name = "ratio" if ratio else "gap"
    return name if record.get("verdict", "point") == "point" or record["metric"] in ("delayed_impact", "benefit_rate") else f"raw_{name}"


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
