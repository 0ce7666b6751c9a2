"""Pairing two groups' outcomes for the betting tests so that every trial counts and pairs stay independent (pure).

See `fairstream.estimators.betting` for why the pairs may be formed from the order of arrival and the counts, never
from the values.
"""

from __future__ import annotations

from collections import deque

SLACK = 8
"""Outcomes a group may have waiting beyond one pair's worth before pairs take one more (or one fewer) of the larger
group: the ratio of the counts is rarely a whole number, and what it leaves over must neither pile up nor be lost."""


class RatioPairs:
    """Turns two unpaired streams of outcomes into pairs (x, y): each outcome of the group with fewer so far meets the
    mean of the next r outcomes of the other, r the ratio of the groups' counts so far, rounded (1 when they are
    even), one more while the larger group has more than `SLACK` outcomes left over and one fewer while the smaller
    one has. So every outcome is used, at most a few pairs late, and r depends on the counts alone.

    >>> pairs = RatioPairs()
    >>> [pairs.push(False, y) for y in (0.0, 1.0, 1.0, 0.0)], pairs.push(True, 0.5)
    ([[], [], [], []], [(0.5, 0.5)])
    """

    __slots__ = ("_waiting", "_counts")

    def __init__(self) -> None:
        self._waiting: tuple[deque[float], deque[float]] = (deque(), deque())
        self._counts = [0, 0]

    def push(self, group_is_a: bool, outcome: float) -> list[tuple[float, float]]:
        """The pairs this outcome completes: none while its group's outcomes wait for the other group's."""
        side = 0 if group_is_a else 1
        self._waiting[side].append(outcome)
        self._counts[side] += 1
        formed = []
        while self._waiting[0] and self._waiting[1]:
            few = 0 if self._counts[0] <= self._counts[1] else 1
            many = 1 - few
            r = max(1, round(self._counts[many] / self._counts[few]))
            if len(self._waiting[few]) > SLACK:
                r = max(1, r - 1)
            elif len(self._waiting[many]) >= r + SLACK:
                r += 1
            if len(self._waiting[many]) < r:
                break
            single = self._waiting[few].popleft()
            mean = sum(self._waiting[many].popleft() for _ in range(r)) / r
            formed.append((single, mean) if few == 0 else (mean, single))
        return formed
