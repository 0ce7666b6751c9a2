"""When open trials close: entries `(close time, seq, key)` handed back in (close time, seq) order (pure)."""

from __future__ import annotations

import heapq
from collections import deque

Entry = tuple[int, int, str]
"""(close time, open sequence number, dependence key); the sequence number is unique, so entries never tie."""


class CloseSchedule:
    """A FIFO for entries pushed in order (trials of a fixed length opened in event-time order: the usual case), a heap for the rest.

    Popping merges the two, so the order is exactly that of one heap, at O(1) instead of O(log n) per trial.
    """

    def __init__(self, fifo: deque[Entry] | None = None, heap: list[Entry] | None = None):
        self.fifo: deque[Entry] = fifo if fifo is not None else deque()
        self.heap: list[Entry] = heap if heap is not None else []

    def push(self, entry: Entry) -> None:
        fifo = self.fifo
        if not fifo or entry > fifo[-1]:
            fifo.append(entry)
        else:
            heapq.heappush(self.heap, entry)

    def pop_due(self, through: int | None) -> list[Entry]:
        """Remove and return, in order, every entry closing at or before `through` (all of them when None)."""
        fifo, heap = self.fifo, self.heap
        due: list[Entry] = []
        if through is None:
            while fifo or heap:
                due.append(fifo.popleft() if fifo and (not heap or fifo[0] < heap[0]) else heapq.heappop(heap))
            return due
        while True:
            first = fifo[0] if fifo and fifo[0][0] <= through else None
            if heap and heap[0][0] <= through and (first is None or heap[0] < first):
                due.append(heapq.heappop(heap))
            elif first is not None:
                due.append(fifo.popleft())
            else:
                return due

    def copy(self) -> CloseSchedule:
        return CloseSchedule(deque(self.fifo), list(self.heap))
