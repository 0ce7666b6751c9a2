"""When scheduled trials close: (close time, dependence key) entries handed back in close-time order once due (pure)."""

from __future__ import annotations

import heapq
from bisect import bisect_right
from operator import itemgetter

_close_time = itemgetter(0)


class CloseSchedule:
    """Entries pushed in close-time order (trials of a fixed length opened in event-time order: the usual case) sit in
    two parallel lists read from `head`; the rest sit in a heap.

    The entries due by a time come out of the lists as two slices found by bisection, with no object per entry;
    the heap's due entries are merged in, so the result is in close-time order either way.
    """

    def __init__(self, times: list[int] | None = None, keys: list[str] | None = None, heap: list[tuple[int, str]] | None = None):
        self.times: list[int] = times if times is not None else []
        self.keys: list[str] = keys if keys is not None else []
        self.head = 0
        self.heap: list[tuple[int, str]] = heap if heap is not None else []

    def __len__(self) -> int:
        return len(self.times) - self.head + len(self.heap)

    def push(self, closes: int, key: str) -> None:
        times = self.times
        if not times or closes >= times[-1]:
            times.append(closes)
            self.keys.append(key)
        else:
            heapq.heappush(self.heap, (closes, key))

    def pop_due(self, through: int | None) -> tuple[list[int], list[str]]:
        """Remove and return the close times and keys of every entry due at or before `through` (all when None), in close-time order."""
        times, keys, head = self.times, self.keys, self.head
        end = len(times) if through is None else bisect_right(times, through, head)
        due_times, due_keys = times[head:end], keys[head:end]
        if end == len(times):
            times.clear()
            keys.clear()
            self.head = 0
        elif end > len(times) // 2:  # drop the consumed half, so the lists' memory follows the open trials
            del times[:end], keys[:end]
            self.head = 0
        else:
            self.head = end
        heap = self.heap
        if heap and (through is None or heap[0][0] <= through):
            late = []
            while heap and (through is None or heap[0][0] <= through):
                late.append(heapq.heappop(heap))
            merged = sorted([*zip(due_times, due_keys), *late], key=_close_time)
            due_times, due_keys = [closes for closes, _ in merged], [key for _, key in merged]
        return due_times, due_keys

    def copy(self) -> CloseSchedule:
        return CloseSchedule(self.times[self.head :], self.keys[self.head :], list(self.heap))
