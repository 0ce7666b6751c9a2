"""The close schedule hands entries back in exactly the order one heap would, in order or not."""

from __future__ import annotations

import heapq
import pickle

from hypothesis import given
from hypothesis import strategies as st

from pipeline.trials.closing import CloseSchedule

close_times = st.lists(st.integers(0, 50), max_size=60)
limits = st.lists(st.integers(0, 60), max_size=8)


def entries(times: list[int]) -> list[tuple[int, int, str]]:
    return [(closes, seq, f"k{seq}") for seq, closes in enumerate(times)]


@given(close_times, limits)
def test_pops_in_heap_order_whatever_the_push_order(times, throughs):
    schedule, heap = CloseSchedule(), []
    for entry in entries(times):
        schedule.push(entry)
        heapq.heappush(heap, entry)
    for through in [*sorted(throughs), None]:
        expected = []
        while heap and (through is None or heap[0][0] <= through):
            expected.append(heapq.heappop(heap))
        assert schedule.pop_due(through) == expected


def test_in_order_pushes_stay_out_of_the_heap():
    schedule = CloseSchedule()
    for entry in entries([1, 2, 2, 5]):
        schedule.push(entry)
    assert schedule.heap == [] and len(schedule.fifo) == 4
    schedule.push((3, 9, "late"))
    assert schedule.heap == [(3, 9, "late")]
    assert [seq for _, seq, _ in schedule.pop_due(4)] == [0, 1, 2, 9]


def test_a_copy_is_independent_and_pickles():
    schedule = CloseSchedule()
    for entry in entries([3, 1, 4]):
        schedule.push(entry)
    clone = pickle.loads(pickle.dumps(schedule.copy()))
    schedule.pop_due(None)
    assert clone.pop_due(None) == sorted(entries([3, 1, 4]))
