"""What a closed trial contributes: the (part, group, hit) cells of the metric and the aggregate totals (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pipeline.spec.expressions import Expression

Cell = tuple[str, str, bool]
"""(part, group, hit): the trial is in the part's conditioning set for its group, and hit says whether the predicted event happened."""

PART_NAMES = {
    "demographic_parity": ("selection_rate",),
    "conditional_statistical_parity": ("selection_rate",),
    "equal_opportunity": ("true_positive_rate",),
    "equalized_odds": ("true_positive_rate", "false_positive_rate"),
}
"""The conditional rates each metric compares across groups, in fairlearn's vocabulary."""


@dataclass(frozen=True)
class MetricCells:
    """Maps a closed trial's variables to the cells it counts in; a trial missing a needed value is incomplete."""

    type: str
    group: str
    prediction: str
    label: str | None = None
    condition: str | None = None
    groups: frozenset[str] | None = None

    def cells(self, values: dict[str, Any]) -> list[Cell] | None:
        group = values.get(self.group)
        hit = values.get(self.prediction)
        if group is None or hit is None:
            return None
        group = str(group)
        if self.groups is not None and group not in self.groups:
            return []
        hit = bool(hit)
        if self.type == "demographic_parity":
            return [("selection_rate", group, hit)]
        if self.type == "conditional_statistical_parity":
            stratum = values.get(self.condition)  # type: ignore[arg-type]
            if stratum is None:
                return None
            return [(f"selection_rate[{self.condition}={stratum}]", group, hit)]
        label = values.get(self.label)  # type: ignore[arg-type]
        if label is None:
            return None
        if label:
            return [("true_positive_rate", group, hit)]
        if self.type == "equalized_odds":
            return [("false_positive_rate", group, hit)]
        return []


@dataclass(frozen=True)
class AggregateRule:
    """One running total over closed trials: a count or a sum of a variable, optionally filtered."""

    name: str
    op: Literal["count", "sum"]
    variable: str | None = None
    where: Expression | None = None

    def contribution(self, values: dict[str, Any]) -> float:
        if self.where is not None and self.where.evaluate(values) is not True:
            return 0.0
        if self.op == "count":
            return 1.0
        value = values.get(self.variable)  # type: ignore[arg-type]
        return float(value) if value is not None else 0.0


@dataclass
class TrialOutcome:
    """A closed trial as the monitor sees it: when it closed, its key, its cells and its aggregate contributions."""

    closed_at: int
    key: str
    cells: list[Cell] | None
    totals: dict[str, float]


@dataclass
class TickDelta:
    """What one bucket's trials closed in one tick contribute: cell counts, totals, and (on request) the trials themselves."""

    counts: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    totals: dict[str, float] = field(default_factory=dict)
    closed: int = 0
    incomplete: int = 0
    trials: list[TrialOutcome] = field(default_factory=list)

    def add(self, outcome: TrialOutcome, keep_trial: bool) -> None:
        self.closed += 1
        if outcome.cells is None:
            self.incomplete += 1
        else:
            for part, group, hit in outcome.cells:
                cell = self.counts.get((part, group))
                if cell is None:
                    self.counts[(part, group)] = [int(hit), 1]
                else:
                    cell[0] += hit
                    cell[1] += 1
        for name, value in outcome.totals.items():
            self.totals[name] = self.totals.get(name, 0.0) + value
        if keep_trial:
            self.trials.append(outcome)

    def __iadd__(self, other: TickDelta) -> TickDelta:
        for key, (hits, n) in other.counts.items():
            cell = self.counts.setdefault(key, [0, 0])
            cell[0] += hits
            cell[1] += n
        for name, value in other.totals.items():
            self.totals[name] = self.totals.get(name, 0.0) + value
        self.closed += other.closed
        self.incomplete += other.incomplete
        self.trials.extend(other.trials)
        return self


@dataclass(frozen=True)
class Outcomes:
    """Turns a closed trial's variables into a `TrialOutcome`."""

    metric: MetricCells
    aggregates: tuple[AggregateRule, ...] = ()

    def of(self, closed_at: int, key: str, values: dict[str, Any]) -> TrialOutcome:
        totals = {rule.name: rule.contribution(values) for rule in self.aggregates}
        return TrialOutcome(closed_at, key, self.metric.cells(values), totals)
