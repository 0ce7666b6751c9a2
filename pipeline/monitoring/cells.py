"""How a metric counts each group's closed trials, chosen once by the compiler: hits and trials (`RateCells`), sums of
numbers (`SumCells`), scores cut at their running median (`ScoreCells`), or the moments of groups known as
probabilities (`ProxyCells`) (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from fairstream.estimators.rate import Rate
from fairstream.trials.outcomes import TickDelta

if TYPE_CHECKING:
    from fairstream.estimators.proxy import ProxyLayout
    from fairstream.monitoring.counts import Counts


@dataclass(frozen=True)
class RateCells:
    """Plain rates of events: each group's hits and trials."""

    measures: ClassVar[bool] = False

    def table(self, counts: Counts) -> dict[str, dict[str, Any]]:
        """The parts and groups an evaluation judges."""
        return counts.rates

    def count(self, counts: Counts, delta: TickDelta, sign: int) -> None:
        """Add (sign 1) or take out (sign -1) a tick's counts, the trials of untracked groups counted apart."""
        tracked = counts.groups.admit(delta.counts)
        for (part, group), (hits, trials) in delta.counts.items():
            if (part, group) not in tracked:
                counts.groups.miss(part, group, sign * trials)
                continue
            rate = counts.rates.setdefault(part, {}).setdefault(group, Rate())
            rate.hits += sign * hits
            rate.trials += sign * trials

    def add(self, counts: Counts, cells: list[tuple[str, str, Any]]) -> None:
        """Count one closed trial's tracked cells."""
        for part, group, hit in cells:
            counts.rates.setdefault(part, {}).setdefault(group, Rate()).update(hit)

    def remove(self, counts: Counts, part: str, group: str, value: Any) -> None:
        """Take one trial's cell out again (a window moved past it)."""
        if group not in counts.rates.get(part, {}):
            counts.groups.miss(part, group, -1)
            return
        counts.rates[part][group].revert(bool(value))

    def draw(self, counts: Counts) -> None:
        """Bring the counts up to date before an evaluation reads them."""

    def after_tick(self, counts: Counts) -> None:
        """What an evaluation tick leaves behind (a discount, a recency average)."""


@dataclass(frozen=True)
class ScoreCells(RateCells):
    """A scoring rate against the running median: each group's scores, turned into rates at each evaluation."""

    def add(self, counts: Counts, cells: list[tuple[str, str, Any]]) -> None:
        for _part, group, score in cells:
            counts.score_counts.add(group, score[0])

    def remove(self, counts: Counts, part: str, group: str, value: Any) -> None:
        if group in counts.score_counts.counts:
            counts.score_counts.add(group, value[0], -1)
            return
        super().remove(counts, part, group, value)

    def draw(self, counts: Counts) -> None:
        counts.rates["scoring_rate"] = counts.score_counts.draw_rates()


@dataclass(frozen=True)
class SumCells:
    """Sums of numbers (mean outcomes, benefit rates, partly seen rates): each group's sums and its trials, last."""

    discount: float = 1.0
    """Benefit rates (ELBERT): the t-th evaluation tick of an episode (the run, or a periodic window) weighs discount^t."""
    recency: float = 1.0
    """Benefit rates: the supply and demand summed so far keep this share at every tick (a recency average)."""
    measures: ClassVar[bool] = True

    def table(self, counts: Counts) -> dict[str, dict[str, Any]]:
        return counts.sums

    def count(self, counts: Counts, delta: TickDelta, sign: int) -> None:
        tracked = counts.groups.admit(delta.counts)
        weight = sign * counts.weight  # below 1 only for discounted benefit rates, whose numbers are (supply, demand, trials)
        for (part, group), numbers in delta.counts.items():
            if (part, group) not in tracked:
                counts.groups.miss(part, group, round(sign * numbers[-1]))
                continue
            cell = counts.sums.setdefault(part, {}).setdefault(group, [0.0] * len(numbers))
            for index, number in enumerate(numbers[:-1]):
                cell[index] += weight * number
            cell[-1] += sign * numbers[-1]

    def add(self, counts: Counts, cells: list[tuple[str, str, Any]]) -> None:
        for part, group, numbers in cells:
            cell = counts.sums.setdefault(part, {}).setdefault(group, [0.0] * (len(numbers) + 1))
            for index, number in enumerate(numbers):
                cell[index] += number
            cell[-1] += 1

    def remove(self, counts: Counts, part: str, group: str, value: Any) -> None:
        if group not in counts.sums.get(part, {}):
            counts.groups.miss(part, group, -1)
            return
        cell = counts.sums[part][group]
        for index, number in enumerate(value):
            cell[index] -= number
        cell[-1] -= 1

    def draw(self, counts: Counts) -> None:
        """Sums are read as they stand."""

    def after_tick(self, counts: Counts) -> None:
        counts.weight *= self.discount
        if self.recency < 1:
            for groups in counts.sums.values():
                for cell in groups.values():
                    cell[0] *= self.recency
                    cell[1] *= self.recency


@dataclass(frozen=True)
class WeightedCells(SumCells):
    """Rates of weighted trials: each group's Σ w·hit, Σ w, Σ w², hits and trials (see `fairstream.verdicts.parts.weighted_part`)."""

    measures: ClassVar[bool] = False


@dataclass(frozen=True)
class ProxyCells(SumCells):
    """Groups known only as probabilities: per part one cell of moment sums over every trial (see
    `fairstream.estimators.proxy`), judged by `fairstream.verdicts.proxy`."""

    layout: ProxyLayout | None = None
    measures: ClassVar[bool] = False


Cells = RateCells | ScoreCells | SumCells | WeightedCells | ProxyCells
