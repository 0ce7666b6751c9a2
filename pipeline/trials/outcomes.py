"""What a closed trial contributes: the (part, group, hit) cells of the metric and the aggregate totals (pure)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from fairstream.language.expressions import Expression
from fairstream.trials.panes import merge_panes

if TYPE_CHECKING:
    from fairstream.estimators.proxy import ProxyLayout

Cell = tuple[str, str, bool | tuple[float, ...]]
"""(part, group, value): for rates, whether the predicted event happened for a trial in the part's conditioning set;
for measures, the numbers to sum: (x, x²) of a mean outcome, (supply, demand) of a benefit rate."""

PART_NAMES = {
    "demographic_parity": ("selection_rate",),
    "conditional_statistical_parity": ("selection_rate",),
    "equal_opportunity": ("true_positive_rate",),
    "equalized_odds": ("true_positive_rate", "false_positive_rate"),
    "predictive_parity": ("positive_predictive_value",),
    "disparate_impact": ("selection_rate",),
    "delayed_impact": ("mean_outcome",),
    "benefit_rate": ("benefit_rate",),
    "scoring_rate": ("scoring_rate",),
}
"""The conditional rates each metric compares across groups, in fairlearn's vocabulary."""

LABEL_PARTS = {
    "equal_opportunity": (("true_positive_rate", "tpr"),),
    "equalized_odds": (("true_positive_rate", "tpr"), ("false_positive_rate", "fpr")),
    "predictive_parity": (("positive_predictive_value", "ppv"),),
}
"""The rates of the label metrics, each with the role of prediction and label in it (what conditions, what is counted)."""

SEEN_HIT, SEEN_MISS, UNSEEN_IF_IN_HIT, UNSEEN_IF_IN_MISS, IN_UNSEEN, SEEN = range(6)
"""The counts of a partly seen rate: seen members that are hits and misses; unseen trials that would be a hit (or a
miss) if they belonged to the rate's conditioning set, which depends on their unseen label (TPR, FPR); unseen trials
that belong to it for sure but whose hit is their unseen label (PPV); every seen trial. Then the inverse-propensity
sums A, B, A², B², AB."""


def partly_seen(role: str, predicted: bool, seen: bool, label: bool | None, weight: float, decided_is_seen: bool = False) -> tuple[float, ...]:
    """What one trial adds to a partly seen rate: the six counts, then A and B, whose sums' ratio ΣA/ΣB estimates the
    rate, with their squares and product for its variance.

    A rate is E[member·hit] / E[member], member and hit functions g(ŷ, y) of the prediction and the label. With w = 1/π
    (π the trial's logged probability of being seen) and labels seen independently of them given the inputs, a seen
    trial adds w·g(ŷ, y), so E[ΣA] = E[Σ g]. When the prediction is itself what lets the label be seen (an approval,
    `decided_is_seen`), a seen trial was predicted positive, and it stands in for the unseen negatives too:
    g(1, y) + (w − 1)·g(0, y), since an unseen trial is one with ŷ = 0 seen with probability 1 − π.

    >>> partly_seen("tpr", True, False, None, 0.0)[:6]  # unseen, predicted positive: a hit if its label is positive
    (0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    >>> partly_seen("tpr", True, True, True, 4.0, decided_is_seen=True)[6:8]  # approved at π = 1/4, repaid: A = 1, B = 4
    (1.0, 4.0)
    """
    counts = [0.0] * 6
    counts[SEEN] = float(seen)
    if not seen:
        if role == "ppv":
            counts[IN_UNSEEN] = float(predicted)
        else:
            counts[UNSEEN_IF_IN_HIT if predicted else UNSEEN_IF_IN_MISS] = 1.0
        return (*counts, 0.0, 0.0, 0.0, 0.0, 0.0)
    member, hit = _membership(role, predicted, bool(label))
    if member:
        counts[SEEN_HIT if hit else SEEN_MISS] = 1.0
    if decided_is_seen:
        member_0, hit_0 = _membership(role, False, bool(label))
        a = member * hit + (weight - 1) * member_0 * hit_0
        b = member + (weight - 1) * member_0
    else:
        a, b = weight * member * hit, weight * member
    return (*counts, a, b, a * a, b * b, a * b)


def _membership(role: str, predicted: bool, label: bool) -> tuple[float, float]:
    """(member, hit) of a trial in a label rate: TPR counts predictions among positives, FPR among negatives, PPV
    positives among predictions."""
    if role == "ppv":
        return float(predicted), float(label)
    return float(label if role == "tpr" else not label), float(predicted)


UNLABELED = "\x1funlabeled"
"""The hidden part where a plain label's trials without a label are counted, per group, with their prediction as the
hit: a group whose missing labels all sit on one side of the prediction has a biased rate (see `selective_groups`)."""


UNLISTED = "\x1funlisted\x1f"
"""The prefix of the hidden totals that count closed trials per group value outside a listed `groups` (see
`Outcomes.counted`), so a listed group no trial carries can be named beside the values the trials did carry."""


MARGINAL = "\x1fmarginal\x1f"
"""The prefix of the hidden parts that count an intersectional group's trials by one of its variables alone
(`MARGINAL + variable + "\x1f" + part`), so each attribute's table counts its own trials, none left out with a
suppressed intersection."""


def marginal_part(variable: str, part: str) -> str:
    return f"{MARGINAL}{variable}\x1f{part}"


def hidden(part: str) -> bool:
    """Whether a part is bookkeeping, never judged or published (`UNLABELED`)."""
    return part.startswith("\x1f")


PROXY = "\x1fproxy"
"""The one cell per part where the trials of a metric whose groups are probabilities are summed."""

def truth_of(variable: str) -> str:
    """The hidden variable holding the self-reported group beside a variable of probabilities (its `truth` field)."""
    return f"{variable}\x1ftruth"


GROUP_JOIN = " & "
"""Joins the values of several group variables into one intersectional group name."""

MEMO_LIMIT = 4096
"""Most distinct slot tuples whose outcome is remembered (a few dozen for group × prediction × label)."""

Counted = tuple[list[Cell] | None, dict[str, float]]
"""What one closed trial counts in: its cells (None: incomplete) and its aggregate contributions."""



def weighted(hit: bool, weight: float) -> tuple[float, float, float, float]:
    """A weighted trial's cell value, summed per group: w·hit, w, w² (for Kish's effective trials) and the hit itself."""
    return (weight if hit else 0.0, weight, weight * weight, 1.0 if hit else 0.0)


@dataclass(frozen=True)
class MetricCells:
    """Maps a closed trial's variables to the cells it counts in; a trial missing a needed value is incomplete."""

    type: str
    group: str | tuple[str, ...]
    prediction: str | None
    label: str | None = None
    condition: str | None = None
    given: str | None = None
    """A boolean variable the rates are conditional on: a trial where it is false counts in no cell."""
    observed_when: str | None = None
    """A boolean variable: the label is seen only where it is true (see `partly_seen`)."""
    propensity: str | None = None
    """A numeric variable: each trial's probability that its label is seen, for inverse-propensity weights."""
    weight: str | None = None
    """A numeric variable: each trial's weight; a rate's cell value is then (w·hit, w, w², hit), summed (`weighted`)."""
    outcome: str | None = None
    supply: str | None = None
    demand: str | None = None
    score: str | None = None
    median: float | None = None
    """A scoring rate's fixed cut; None: the running median, so the trial's score itself is its cell's value."""
    groups: frozenset[str] | None = None
    proxy: ProxyLayout | None = None
    """Where the group variable holds probabilities: the groups they are over, and where each sum sits in a cell."""

    def group_of(self, values: dict[str, Any]) -> str | None:
        """The trial's group name; None when a group variable is missing."""
        if isinstance(self.group, str):
            value = values.get(self.group)
            return None if value is None else str(value)
        parts = [values.get(name) for name in self.group]
        return None if any(part is None for part in parts) else GROUP_JOIN.join(map(str, parts))

    def unlisted(self, values: dict[str, Any]) -> list[str]:
        """The group values of a trial outside the listed groups (for probabilities: those given a probability above 0)."""
        if self.groups is None:
            return []
        if self.proxy is not None:
            vector = values.get(self.group)  # type: ignore[call-overload]
            return sorted(group for group, probability in vector.items() if probability > 0 and group not in self.groups) if vector else []
        group = self.group_of(values)
        return [group] if group is not None and group not in self.groups else []

    def cells(self, values: dict[str, Any]) -> list[Cell] | None:
        if self.proxy is not None:
            return self._proxied(values)
        if self.type in ("delayed_impact", "benefit_rate"):
            return self._measures(values)
        if self.type == "scoring_rate":
            return self._scored(values)
        if self.given is None:
            return self._rates(values)
        given = values.get(self.given)
        if given is None:
            return None
        if not given:
            return []
        cells = self._rates(values)
        return cells and [(f"{part}[given {self.given}]", group, value) for part, group, value in cells]

    def _rates(self, values: dict[str, Any]) -> list[Cell] | None:
        if self.observed_when is not None:
            return self._partly_seen(values)
        return self._seen(values)

    def _partly_seen(self, values: dict[str, Any]) -> list[Cell] | None:
        """Label rates whose label is seen only for some trials: per part the numbers `partly_seen` sums."""
        group, hit, seen = self.group_of(values), values.get(self.prediction), values.get(self.observed_when)  # type: ignore[arg-type]
        if group is None or hit is None or seen is None:
            return None
        if self.groups is not None and group not in self.groups:
            return []
        label = values.get(self.label) if seen else None  # type: ignore[arg-type]
        if seen and label is None:
            return None
        weight = 1.0
        if self.propensity is not None:
            propensity = values.get(self.propensity)
            if propensity is None or not 0 < propensity <= 1:
                return None
            weight = 1 / propensity
        decided_is_seen = self.prediction == self.observed_when
        return [
            (part, group, partly_seen(role, bool(hit), bool(seen), None if label is None else bool(label), weight, decided_is_seen))
            for part, role in LABEL_PARTS[self.type]
        ]

    def _seen(self, values: dict[str, Any]) -> list[Cell] | None:
        cells = self._seen_by_group(values)
        if cells and self.weight is not None:
            weight = values.get(self.weight)
            if weight is None or not 0 <= weight < math.inf:
                return None  # a weight that is missing, negative or not finite: the trial is incomplete
            cells = [(part, group, weighted(hit, weight)) for part, group, hit in cells]
        if not cells or isinstance(self.group, str):
            return cells
        counted = [cell for cell in cells if not hidden(cell[0])]
        return cells + [(marginal_part(name, part), str(values[name]), hit) for part, _group, hit in counted for name in self.group]

    def _seen_by_group(self, values: dict[str, Any]) -> list[Cell] | None:
        group = self.group_of(values)
        hit = values.get(self.prediction)  # type: ignore[arg-type]
        if group is None or hit is None:
            return None
        if self.groups is not None and group not in self.groups:
            return []
        hit = bool(hit)
        if self.type in ("demographic_parity", "disparate_impact"):
            return [("selection_rate", group, hit)]
        if self.type == "conditional_statistical_parity":
            stratum = values.get(self.condition)  # type: ignore[arg-type]
            if stratum is None:
                return None
            return [(f"selection_rate[{self.condition}={stratum}]", group, hit)]
        label = values.get(self.label)  # type: ignore[arg-type]
        if label is None:
            return [(UNLABELED, group, hit)]  # not counted in any rate, but where it was missing is told
        if self.type == "predictive_parity":
            return [("positive_predictive_value", group, bool(label))] if hit else []
        if label:
            return [("true_positive_rate", group, hit)]
        if self.type == "equalized_odds":
            return [("false_positive_rate", group, hit)]
        return []

    def _proxied(self, values: dict[str, Any]) -> list[Cell] | None:
        """A trial whose group is known as probabilities: per part, the moments of its vector with its hit and whether
        it is in the part's set (see `fairstream.estimators.proxy`), all in one cell per part."""
        assert self.proxy is not None and isinstance(self.group, str)
        vector, predicted = values.get(self.group), values.get(self.prediction)  # type: ignore[arg-type]
        if vector is None or predicted is None:
            return None
        if self.unlisted(values):
            return []
        given = True
        if self.given is not None:
            if values.get(self.given) is None:
                return None
            given = bool(values[self.given])
        predicted = bool(predicted)
        if self.type in ("demographic_parity", "disparate_impact"):
            roles = [("selection_rate", given, predicted)]
        else:
            label = values.get(self.label)  # type: ignore[arg-type]
            if label is None:
                return None
            label = bool(label)
            if self.type == "predictive_parity":
                roles = [("positive_predictive_value", given and predicted, label)]
            else:
                roles = [("true_positive_rate", given and label, predicted)]
                if self.type == "equalized_odds":
                    roles.append(("false_positive_rate", given and not label, predicted))
        import numpy as np  # proxy groups alone need it: a monitor of declared groups starts without numpy

        p = np.array([vector.get(group, 0.0) for group in self.proxy.groups])
        suffix = f"[given {self.given}]" if self.given is not None else ""
        truth = str(values.get(truth_of(self.group))) if self.proxy.calibration else None
        index = self.proxy.groups.index(truth) if truth in self.proxy.groups else -1
        return [(part + suffix, PROXY, self.proxy.numbers(p, hit, member, index)) for part, member, hit in roles]

    def _scored(self, values: dict[str, Any]) -> list[Cell] | None:
        """A scoring rate: above the fixed cut or not; against the running median, the score itself (see `ScoreCounts`)."""
        group, score = self.group_of(values), values.get(self.score)  # type: ignore[arg-type]
        if group is None or score is None:
            return None
        if self.groups is not None and group not in self.groups:
            return []
        return [("scoring_rate", group, score > self.median if self.median is not None else (float(score),))]

    def _measures(self, values: dict[str, Any]) -> list[Cell] | None:
        group = self.group_of(values)
        if self.type == "delayed_impact":
            numbers = (values.get(self.outcome),)  # type: ignore[arg-type]
        else:
            numbers = (values.get(self.supply), values.get(self.demand))  # type: ignore[arg-type]
        if group is None or any(number is None for number in numbers):
            return None
        if self.groups is not None and group not in self.groups:
            return []
        if self.type == "delayed_impact":
            x = float(numbers[0])
            return [("mean_outcome", group, (x, x * x))]
        return [("benefit_rate", group, (float(numbers[0]), float(numbers[1])))]


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


class TrialOutcome(NamedTuple):
    """A closed trial as the monitor sees it: when it closed, its key, its cells and its aggregate contributions (a
    tuple: one is made per closed trial a monitor takes one by one)."""

    closed_at: int
    key: str
    cells: list[Cell] | None
    totals: dict[str, float]
    opened_at: int | None = None
    """When it opened, for windows that select trials by it."""

    @property
    def opened(self) -> int:
        """When it opened (a trial handed over without it opened and closed at once)."""
        return self.closed_at if self.opened_at is None else self.opened_at


CLOSE_ORDER = operator.attrgetter("closed_at", "key")
"""The order closed trials are counted in: by close time, then key."""


@dataclass
class TickDelta:
    """What one bucket's trials closed in one tick contribute: cell counts, totals, and (on request) the trials themselves."""

    counts: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    """Per (part, group): [hits, trials] for rates, [*sums, trials] for measures."""
    totals: dict[str, float] = field(default_factory=dict)
    closed: int = 0
    incomplete: int = 0
    trials: list[TrialOutcome] = field(default_factory=list)
    unsettled: dict[tuple[Any, ...], int] = field(default_factory=dict)
    """Closed trials not yet counted into cells, by their slot tuple: counted where the trials closed, so a report holds one
    entry per distinct tuple (a few dozen), not one per trial; the merge adds every reporter's, then `settle` turns each
    distinct tuple into cells once."""
    windows: dict[tuple[str, str | None], list[float]] = field(default_factory=dict)
    """The tick's panes of the spec's windows over raw events: per (window, group), [count, sum, min, max]."""
    opened: int = 0
    """Trials that opened in the tick (reported for monitors that count open trials)."""

    def add(self, outcome: TrialOutcome, keep_trial: bool) -> None:
        """Count a closed trial into the tick's sums, or keep it whole for a monitor that counts trials one by one
        (`MonitorConfig.needs_trials`: it reads the trials, never the sums)."""
        if keep_trial:
            self.trials.append(outcome)
        else:
            self.count(outcome.cells, outcome.totals)

    def count(self, cells: list[Cell] | None, totals: dict[str, float], trials: int = 1) -> None:
        """Count `trials` closed trials alike in their cells (None: incomplete) and aggregate contributions."""
        self.closed += trials
        if cells is None:
            self.incomplete += trials
        else:
            counts = self.counts
            for part, group, hit in cells:
                cell = counts.get((part, group))
                if hit.__class__ is tuple:  # a measure: sum its numbers, count it last
                    if cell is None:
                        counts[(part, group)] = [*(number * trials for number in hit), trials]
                    else:
                        for index, number in enumerate(hit):
                            cell[index] += number * trials
                        cell[-1] += trials
                elif cell is None:
                    counts[(part, group)] = [hit * trials, trials]
                else:
                    cell[0] += hit * trials
                    cell[1] += trials
        for name, value in totals.items():
            self.totals[name] = self.totals.get(name, 0.0) + value * trials

    def settle(self, outcome_of: Callable[[tuple[Any, ...]], Counted]) -> None:
        """Count the trials waiting in `unsettled` into cells and totals."""
        for slots, trials in self.unsettled.items():
            self.count(*outcome_of(slots), trials)
        self.unsettled = {}

    def __iadd__(self, other: TickDelta) -> TickDelta:
        unsettled = self.unsettled
        for slots, trials in other.unsettled.items():
            unsettled[slots] = unsettled.get(slots, 0) + trials
        for key, sums in other.counts.items():
            cell = self.counts.get(key)
            if cell is None:
                self.counts[key] = list(sums)
            else:
                for index, number in enumerate(sums):
                    cell[index] += number
        for name, value in other.totals.items():
            self.totals[name] = self.totals.get(name, 0.0) + value
        self.closed += other.closed
        self.incomplete += other.incomplete
        self.opened += other.opened
        self.trials.extend(other.trials)
        if other.windows:
            merge_panes(self.windows, other.windows)
        return self


@dataclass(frozen=True)
class Outcomes:
    """Turns a closed trial's variables into a `TrialOutcome`."""

    metric: MetricCells
    aggregates: tuple[AggregateRule, ...] = ()

    def of(self, closed_at: int, key: str, values: dict[str, Any], opened_at: int | None = None) -> TrialOutcome:
        return TrialOutcome(closed_at, key, *self.counted(values), opened_at)

    def counted(self, values: dict[str, Any]) -> Counted:
        """What a trial with these variables counts in: its cells and its aggregate contributions (a trial whose group is
        outside the listed groups counts in no cell, and in the hidden total of its group value)."""
        cells = self.metric.cells(values)
        totals = {rule.name: rule.contribution(values) for rule in self.aggregates}
        if cells == []:
            for group in self.metric.unlisted(values):
                totals[UNLISTED + group] = 1.0
        return cells, totals


class SlotOutcomes:
    """What a closed trial counts in, from its slot values (`variables` turns them into the trial's variables),
    remembered per distinct slot tuple: valid where equal slots mean equal variables (a layout's exact slots)."""

    def __init__(self, outcomes: Outcomes, variables: Callable[[tuple[Any, ...]], dict[str, Any]]):
        self.outcomes = outcomes
        self.variables = variables
        self._memo: dict[tuple[Any, ...], Counted] = {}

    def __call__(self, slots: tuple[Any, ...]) -> Counted:
        counted = self._memo.get(slots)
        if counted is None:
            counted = self.outcomes.counted(self.variables(slots))
            if len(self._memo) < MEMO_LIMIT:
                self._memo[slots] = counted
        return counted

    def __getstate__(self) -> dict[str, Any]:
        return {"outcomes": self.outcomes, "variables": self.variables, "_memo": {}}
