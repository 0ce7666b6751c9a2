"""Scores per group, for the scoring rate of NYC Local Law 144: the share of a group's trials whose score is above the
median score of all trials counted (pure)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fairstream.estimators.rate import Rate


@dataclass
class ScoreCounts:
    """How many trials of each group had each score; a window takes trials out again."""

    counts: dict[str, Counter] = field(default_factory=dict)
    cut: float | None = None
    """The median the rates were last drawn at (see `draw_rates`); None before any score."""

    def add(self, group: str, score: float, sign: int = 1) -> None:
        scores = self.counts.setdefault(group, Counter())
        scores[score] += sign
        if scores[score] == 0:
            del scores[score]

    def clear(self) -> None:
        self.counts.clear()

    def median(self) -> float | None:
        """The median of every counted score (the mean of the two middle ones for an even count); None before any.

        >>> scores = ScoreCounts()
        >>> for group, score in (("a", 1), ("a", 4), ("b", 3), ("b", 10)):
        ...     scores.add(group, score)
        >>> scores.median()
        3.5
        """
        together: Counter = Counter()
        for scores in self.counts.values():
            together.update(scores)
        total = sum(together.values())
        if not total:
            return None
        middle = [(total - 1) // 2, total // 2]
        found: list[float] = []
        seen = 0
        for score in sorted(together):
            seen += together[score]
            while middle and middle[0] < seen:
                found.append(score)
                middle.pop(0)
            if not middle:
                break
        return (found[0] + found[1]) / 2

    def draw_rates(self) -> dict[str, Rate]:
        """Per group, its trials and those scoring above the median of all scores, which is kept as `cut`."""
        cut = self.cut = self.median()
        if cut is None:
            return {}
        return {
            group: Rate(hits=sum(count for score, count in scores.items() if score > cut), trials=sum(scores.values()))
            for group, scores in self.counts.items()
            if scores
        }
