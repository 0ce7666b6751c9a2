"""The close schedule hands back every due entry in close-time order, whatever the push order, and nothing else."""

from __future__ import annotations

import gc
import pickle
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from fairstream.trials.closing import CloseSchedule

close_times = st.lists(st.integers(0, 50), max_size=60)
limits = st.lists(st.integers(0, 60), max_size=8)
chunk_sizes = st.sampled_from([1, 3, 1000])
"""Entries per chunk: every entry sealed, a few, or none sealed."""


def entries(times: list[int]) -> list[tuple[int, str]]:
    return [(closes, f"k{index}") for index, closes in enumerate(times)]


def pushed(times: list[int], chunk_size: int = 3) -> CloseSchedule:
    schedule = CloseSchedule(chunk_size=chunk_size)
    for closes, key in entries(times):
        schedule.push(closes, key)
    return schedule


@given(close_times, limits, chunk_sizes)
def test_pops_each_entry_once_when_due_in_close_time_order(times, throughs, chunk_size):
    schedule, waiting, popped = pushed(times, chunk_size), entries(times), []
    for through in [*sorted(throughs), None]:
        due_times, due_keys = schedule.pop_due(through)
        assert due_times == sorted(due_times)
        expected = [entry for entry in waiting if through is None or entry[0] <= through]
        waiting = [entry for entry in waiting if entry not in expected]
        assert Counter(zip(due_times, due_keys)) == Counter(expected)
        popped.extend(due_keys)
    assert sorted(popped) == sorted(key for _, key in entries(times)) and len(schedule) == 0


def test_in_order_pushes_stay_out_of_the_heap():
    schedule = pushed([1, 2, 2, 5])
    assert schedule.heap == [] and len(schedule) == 4
    schedule.push(3, "late")
    assert schedule.heap == [(3, "late")]
    assert schedule.pop_due(4) == ([1, 2, 2, 3], ["k0", "k1", "k2", "late"])


def test_a_copy_is_independent_and_pickles():
    schedule = pushed([3, 1, 4, 5, 6])  # 3, 4, 5 sealed into a chunk, 6 waiting, 1 in the heap
    schedule.pop_due(1)
    clone = pickle.loads(pickle.dumps(schedule.copy()))
    schedule.pop_due(None)
    assert clone.pop_due(None) == ([3, 4, 5, 6], ["k0", "k2", "k3", "k4"])


@given(st.lists(close_times, max_size=6), limits, chunk_sizes)
def test_batches_pushed_at_once_pop_like_single_pushes(batches, throughs, chunk_size):
    batched, single = CloseSchedule(chunk_size=chunk_size), CloseSchedule(chunk_size=chunk_size)
    for number, batch in enumerate(batches):
        keys = [f"b{number}k{index}" for index in range(len(batch))]
        batched.push_all(batch, keys)
        for closes, key in zip(batch, keys):
            single.push(closes, key)
    for through in [*sorted(throughs), None]:
        due_batched, due_single = batched.pop_due(through), single.pop_due(through)
        assert due_batched[0] == sorted(due_batched[0]) and due_batched[0] == due_single[0]
        assert Counter(zip(*due_batched)) == Counter(zip(*due_single))


def test_sealed_chunks_leave_the_garbage_collectors_view():
    schedule = CloseSchedule(chunk_size=1000)
    for start in range(0, 3500, 500):
        schedule.push_all(list(range(start, start + 500)), [f"k{i}" for i in range(start, start + 500)])
    assert len(schedule.chunks) == 3 and len(schedule.keys) == 500  # sealed every 1000 entries
    gc.collect()  # untracks the keys tuples, and
    gc.collect()  # then the chunks holding them
    assert len(schedule.chunks) == 3
    assert not any(gc.is_tracked(chunk) for chunk in schedule.chunks)
    assert schedule.pop_due(1499) == (list(range(1500)), [f"k{i}" for i in range(1500)])
