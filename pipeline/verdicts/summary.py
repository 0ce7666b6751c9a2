"""Condense a run's records into what a person reads first: final per-group estimates and when each pair of groups first
violated, by the verdict the monitor itself reached (point, confident or anytime; on the gap or on the ratio)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairstream.language.metric import tests_ratio


@dataclass(frozen=True)
class GroupRate:
    """A group's raw rate (or mean) in a part, as fairlearn's MetricFrame shows it, with the MAP estimate beside it."""

    part: str
    group: str
    rate: float | None
    """The raw rate (hits / trials); for a mean outcome or a benefit rate, the estimate itself."""
    estimate: float | None
    """The MAP estimate where the part has a raw rate beside it, else None."""
    hits: int | None
    trials: int | None
    suppressed: bool = False
    """The cell had too few trials to publish (`publish.min_cell`): estimate and counts withheld."""


@dataclass(frozen=True)
class PartGap:
    """A part's gap (or ratio) at an evaluation: of the raw rates, and of the MAP estimates where they differ."""

    part: str
    high: str | None
    low: str | None
    raw: float | None
    estimated: float | None
    threshold: float | None
    status: str | None


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
    row: int | None = None
    """A plain table: the rows read when it was first violated (its event time is a row number, not a date)."""

    @property
    def day(self) -> str:
        """When, as a table shows it: the date, or for a plain table the row."""
        return f"row {self.row:,}" if self.row is not None else self.event_time[:10]


def when(record: dict[str, Any]) -> str:
    """When an evaluation was, as a person reads it: its event time, or for a plain table the rows read."""
    return f"row {record['row']:,}" if "row" in record else record["event_time"]


def publishes_groups(record: dict[str, Any]) -> bool:
    """Whether an evaluation published an estimate of any group (a window may have emptied, or held only small cells)."""
    return any(not cell.get("suppressed", False) for body in record["parts"].values() for cell in body["groups"].values())


def final_rates(record: dict[str, Any]) -> list[GroupRate]:
    """Per part and group, an evaluation's raw rate, MAP estimate and counts."""
    parts = record["parts"]
    return [
        GroupRate(
            part, group, cell.get("rate", cell["estimate"]), cell["estimate"] if "rate" in cell else None,
            cell.get("hits"), cell.get("trials"), cell.get("suppressed", False),
        )  # fmt: skip
        for part in sorted(parts)
        for group, cell in parts[part]["groups"].items()
    ]


def part_gaps(record: dict[str, Any]) -> list[PartGap]:
    """Every part's gap (a ratio metric's ratio) at an evaluation, violated or not: of the raw rates first, of the MAP
    estimates beside it (None where the part has no raw rates: means, benefit rates); constraints are left out."""
    name = "ratio" if tests_ratio(record["metric"]) else "gap"
    gaps = []
    for part, body in sorted(record["parts"].items()):
        if "constraint" in body:
            continue
        pair = body.get("pair") or (None, None)
        raw = body.get(f"raw_{name}", body.get(name))
        gaps.append(PartGap(part, pair[0], pair[1], raw, body.get(name) if f"raw_{name}" in body else None, body.get("threshold"), body.get("status")))
    return gaps


def note_violations(found: dict[str, FirstViolation], record: dict[str, Any]) -> None:
    """Add to `found` every part and pair of groups (or failing constraint group) this evaluation is the first to see
    violated, filed under part and pair (or part and group): fed the evaluations in time order, it holds the dates the
    monitor's violation alerts carry."""
    ratio = tests_ratio(record["metric"])
    for part, body in record["parts"].items():
        if "constraint" in body:
            for group in body["failing"]:
                _first_failure(found, record, part, group, body)
            continue
        if not body.get("violated") or not body.get("pair"):
            continue
        high, low = body["pair"]
        if f"{part}\t{high}\t{low}" not in found:
            value = body[rested_on(record, ratio)]
            found[f"{part}\t{high}\t{low}"] = FirstViolation(part, high, low, record["event_time"], value, _evidence(body, ratio), record.get("row"))


def _first_failure(found: dict[str, FirstViolation], record: dict[str, Any], part: str, group: str, body: dict[str, Any]) -> None:
    """A delayed-impact constraint `group` failed to certify: the row names τ and the group (higher first), the upper
    bound on g = τ − mean (or mean − τ) then, and the bound on the mean against τ."""
    entry, at_least = body["groups"][group], body["constraint"]["direction"] == "at_least"
    if entry.get("suppressed"):  # a cell too small to publish: only that it failed is known
        tau, value, evidence = "τ", None, None
    else:
        side = "lower" if at_least else "upper"
        tau, value, evidence = f"τ {entry['tau']:.4g}", entry["g_upper"], f"mean {entry['estimate']:.4f}, {side} bound {entry['bound']:.4f}"
    high, low = (tau, group) if at_least else (group, tau)
    if f"{part}\t{group}" not in found:
        found[f"{part}\t{group}"] = FirstViolation(part, high, low, record["event_time"], value, evidence, record.get("row"))


def rested_on(record: dict[str, Any], ratio: bool) -> str:
    """The gap (or ratio) a verdict rests on: the MAP one for point verdicts, the raw one for the tests of the others
    (of the moment estimates where groups are given as probabilities: nobody recorded their raw rates)."""
    name = "ratio" if ratio else "gap"
    return name if record.get("verdict", "point") == "point" or record["metric"] in ("delayed_impact", "benefit_rate") or proxied(record) else f"raw_{name}"


def proxied(record: dict[str, Any]) -> bool:
    """Whether an estimate record's groups are given as probabilities (its parts say `groups_from: probabilities`)."""
    return any(body.get("groups_from") == "probabilities" for body in record.get("parts", {}).values())


def _evidence(body: dict[str, Any], ratio: bool) -> str | None:
    """The bound or the test statistic a non-point verdict rested on, as printed."""
    if body.get("log_wealth") is not None:
        return f"log-wealth {body['log_wealth']:.2f}"
    interval = body.get("interval")
    if interval:
        return f"upper bound {interval[1]:.4f}" if ratio else f"lower bound {interval[0]:.4f}"
    return None


def floor_lines(record: dict[str, Any], floor: int, default: bool) -> list[str]:
    """Why a part decided nothing at the end, where the evidence floor is the reason: the trials each group below it
    has, of the `floor` it needs (`default`: the floor is ⌈1/ε²⌉, not a number the spec set)."""
    lines = []
    for part, body in sorted(record["parts"].items()):
        if body.get("status", "inconclusive") != "inconclusive" or body.get("gap") is not None or "constraint" in body:
            continue
        below = [(group, cell.get("trials")) for group, cell in sorted(body["groups"].items()) if cell.get("below_floor")]
        if not below:
            continue
        counts = ", ".join(f"{group} {trials:,}" if trials is not None else f"{group} fewer than publish.min_cell" for group, trials in below)
        threshold = body.get("threshold")
        scale = f"ε = (1 − {threshold:g})/2, the gap the ratio threshold stands for" if tests_ratio(record["metric"]) else f"ε = {threshold:g}"
        why = f"⌈1/ε²⌉ for {scale}, by default; estimator.min_trials sets it" if default else "the spec's estimator.min_trials"
        lines.append(f"{part}: no verdict: the evidence floor asks {floor:,} trials of each group ({why}) and {counts} fall short")
    return lines
