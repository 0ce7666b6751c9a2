"""When scheduled trials close: (close time, dependence key) entries handed back in close-time order once due (pure)."""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_right
from collections import deque
from operator import itemgetter

_close_time = itemgetter(0)

CHUNK_SIZE = 1024
"""Entries gathered before they become one chunk."""

Chunk = tuple[bytes, tuple[str, ...]]
"""Close times (int64s packed in `bytes`) and the keys they belong to, in close-time order."""


class CloseSchedule:
    """Entries pushed in close-time order (trials of a fixed length opened in event-time order: the usual case) are
    kept in chunks; the rest sit in a heap.

    A chunk holds `chunk_size` close times packed in `bytes` and their keys in a tuple of strings, which the garbage
    collector stops tracking (an `array` it would track, and every chunk with it), so the schedule of a few hundred
    thousand open trials adds nothing to a collection; and as few chunks are made, few objects outlive the young
    generations, which is what sets how often the collector traverses everything. The latest entries wait in
    `times` and `keys` until there are enough of them for a chunk.
    """

    def __init__(self, chunks: deque[Chunk] | None = None, heap: list[tuple[int, str]] | None = None, chunk_size: int = CHUNK_SIZE):
        self.chunk_size = chunk_size
        self.chunks: deque[Chunk] = chunks if chunks is not None else deque()
        self.head = 0
        """How many entries of the first chunk are already popped."""
        self.times: list[int] = []
        self.keys: list[str] = []
        self.heap: list[tuple[int, str]] = heap if heap is not None else []

    def __len__(self) -> int:
        return sum(len(keys) for _, keys in self.chunks) - self.head + len(self.keys) + len(self.heap)

    def _latest(self) -> int:
        """The latest close time in order (pending or chunked): an entry before it goes to the heap."""
        if self.times:
            return self.times[-1]
        return _int64s(self.chunks[-1][0])[-1] if self.chunks else -(2**63)

    def push(self, closes: int, key: str) -> None:
        if closes >= self._latest():
            self.times.append(closes)
            self.keys.append(key)
            if len(self.keys) >= self.chunk_size:
                self._seal()
        else:
            heapq.heappush(self.heap, (closes, key))

    def push_all(self, times: list[int], keys: list[str]) -> None:
        """Push entries in one call: appended at once when they are in close-time order after the latest, else one by one."""
        if not times:
            return
        if times[0] >= self._latest() and times == sorted(times):
            self.times.extend(times)
            self.keys.extend(keys)
            if len(self.keys) >= self.chunk_size:
                self._seal()
        else:
            for closes, key in zip(times, keys):
                self.push(closes, key)

    def pop_due(self, through: int | None) -> tuple[list[int], list[str]]:
        """Remove and return the close times and keys of every entry due at or before `through` (all when None), in close-time order."""
        due_times: list[int] = []
        due_keys: list[str] = []
        chunks = self.chunks
        while chunks:
            packed, keys = chunks[0]
            times = _int64s(packed)
            end = len(times) if through is None else bisect_right(times, through, self.head)
            due_times.extend(times[self.head : end].tolist())
            due_keys.extend(keys[self.head : end])
            if end < len(times):
                self.head = end
                break
            chunks.popleft()
            self.head = 0
        else:  # every chunk was due: the waiting entries come next
            end = len(self.times) if through is None else bisect_right(self.times, through)
            if end:
                due_times.extend(self.times[:end])
                due_keys.extend(self.keys[:end])
                del self.times[:end], self.keys[:end]
        heap = self.heap
        if heap and (through is None or heap[0][0] <= through):
            late = []
            while heap and (through is None or heap[0][0] <= through):
                late.append(heapq.heappop(heap))
            merged = sorted([*zip(due_times, due_keys), *late], key=_close_time)
            due_times, due_keys = [closes for closes, _ in merged], [key for _, key in merged]
        return due_times, due_keys

    def _seal(self) -> None:
        """Turn the waiting entries into a chunk."""
        if self.keys:
            self.chunks.append((array("q", self.times).tobytes(), tuple(self.keys)))
            self.times = []
            self.keys = []

    def copy(self) -> CloseSchedule:
        """An independent copy (sealed chunks never change, so the copy shares them)."""
        clone = CloseSchedule(deque(self.chunks), list(self.heap), self.chunk_size)
        clone.head = self.head
        clone.times = list(self.times)
        clone.keys = list(self.keys)
        return clone


def _int64s(packed: bytes) -> memoryview:
    """A chunk's packed close times, readable as a sequence of ints."""
    return memoryview(packed).cast("q")
