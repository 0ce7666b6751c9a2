"""Closed trials handed to the anytime tests in the order their trials opened, not the order their labels arrived (pure).

A label that arrives late, or sooner for one outcome than another (rejections decided faster than approvals), changes
when a trial closes but not when it opened. So the tests see each group's outcomes in opening order: a closed trial is
held until every trial that opened before it has closed (the *frontier* has passed its opening), then released with the
others in (opened, key) order. Which outcome is the k-th of a group then depends on opening times alone.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any


class OpeningOrder:
    """Closed trials' items held until the frontier passes their opening time.

    >>> order = OpeningOrder()
    >>> order.hold(5, "b", "late label, opened 5")
    >>> order.hold(3, "a", "opened 3")
    >>> list(order.release(4)), list(order.release(10))
    (['opened 3'], ['late label, opened 5'])
    """

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held: list[tuple[int, str, Any]] = []

    def __len__(self) -> int:
        return len(self.held)

    def hold(self, opened_at: int, key: str, item: Any) -> None:
        heapq.heappush(self.held, (opened_at, key, item))

    def release(self, frontier: int) -> Iterator[Any]:
        """The items of trials opened before `frontier` (every trial that opened before it has closed), in opening order."""
        held = self.held
        while held and held[0][0] < frontier:
            yield heapq.heappop(held)[2]
