"""The partition clock against a plain reference: which events are late, and which bucket each key goes to."""

import random
import zlib

import pytest

from fairstream.records.events import Event
from fairstream.records.timefmt import format_instant
from fairstream.trials.clock import START_EVENTS, PartitionClock


def reference_admit(
    batches: list[list[int]], lateness: int, ceiling: float = float("inf"), reach: float = float("inf")
) -> list[tuple[list[int], list[str]]]:
    """Per batch, (on-time times, reasons of the rest): `late` when older than the latest on-time time before it by more
    than the lateness; `future` beyond `ceiling`, or more than `reach` after that latest on-time time."""
    latest = None
    out = []
    for times in batches:
        on_time, reasons = [], []
        for time in times:
            if latest is not None and time < latest - lateness:
                reasons.append("late")
            elif time > ceiling or (latest is not None and time > latest + reach):
                reasons.append("future")
            else:
                on_time.append(time)
                latest = time if latest is None else max(latest, time)
        out.append((on_time, reasons))
    return out


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("lateness", [0, 5])
def test_admit_agrees_with_the_reference_on_ordered_and_shuffled_batches(seed, lateness):
    rng = random.Random(seed)
    start, batches = 0, []
    for _ in range(30):
        times = sorted(rng.randrange(start, start + 20) for _ in range(rng.randrange(0, 12)))
        if rng.random() < 0.4:  # some batches out of order, some reaching back before earlier batches
            rng.shuffle(times)
        if rng.random() < 0.2 and times:
            times[0] -= rng.randrange(0, 30)
        batches.append(times)
        start += 10
    clock = PartitionClock(0, lateness)
    held: list[tuple[int, int]] = []  # with a lateness: (time, arrival) of on-time events not yet released
    latest, arrival = None, 0
    for times, (on_time, reasons) in zip(batches, reference_admit(batches, lateness)):
        accepted, letters = clock.admit([Event(f"k{i}", time, "E", {}) for i, time in enumerate(times)])
        assert [letter.reason for letter in letters] == reasons
        if not lateness:
            assert [event.time for event in accepted] == on_time
            continue
        held += [(time, arrival + index) for index, time in enumerate(on_time)]
        arrival += len(on_time)
        latest = max([*on_time, *([] if latest is None else [latest])], default=None)
        due = sorted(entry for entry in held if latest is not None and entry[0] < latest - lateness)
        held = [entry for entry in held if entry not in due]
        assert [event.time for event in accepted] == [time for time, _ in due]
    assert [event.time for event in clock.release_all()[0]] == [time for time, _ in sorted(held)]
    expected_high = max((time for on_time, _ in reference_admit(batches, lateness) for time in on_time), default=None)
    assert clock.high == expected_high


def test_events_of_equal_time_are_released_by_their_kinds_declared_order_then_arrival():
    clock = PartitionClock(0, 10, kind_rank={"OPEN": 0, "OUTCOME": 1})
    arrived = [Event("a", 5, "OUTCOME", {}), Event("b", 5, "OUTCOME", {}), Event("a", 5, "OPEN", {}), Event("c", 3, "OUTCOME", {})]
    assert clock.admit(arrived) == ([], [])  # all within the lateness of the latest time, 5
    released, _ = clock.admit([Event("z", 16, "OPEN", {})])  # the watermark 6 passes them
    assert [(event.key, event.kind) for event in released] == [("c", "OUTCOME"), ("a", "OPEN"), ("a", "OUTCOME"), ("b", "OUTCOME")]
    assert [event.key for event in clock.release_all()[0]] == ["z"]


def test_route_keeps_each_buckets_events_in_order():
    keys = [f"defendant-{i % 37}" for i in range(300)]
    events = [Event(key, i, "E", {}) for i, key in enumerate(keys)]
    routed = PartitionClock(0, 0).route(events, 7)
    expected: dict[int, list[int]] = {}
    for event in events:
        expected.setdefault(zlib.crc32(event.key.encode()) % 7, []).append(event.time)
    assert {bucket: [event.time for event in group] for bucket, group in routed.items()} == expected


@pytest.mark.parametrize("seed", range(20))
def test_events_dated_too_far_ahead_are_future_and_move_nothing(seed, monkeypatch):
    """Against the reference: an event past the wall clock plus max_future, or past the partition's time plus max_ahead, is `future`."""
    import fairstream.trials.clock as clock_module

    rng = random.Random(seed)
    now, max_future, reach = 10_000, 50, 40
    monkeypatch.setattr(clock_module, "wall_clock", lambda: now)
    batches, start = [], 0
    for _ in range(30):
        times = sorted(rng.randrange(start, start + 20) for _ in range(rng.randrange(0, 12)))
        if rng.random() < 0.3 and times:  # a lying clock: far ahead of the partition, or of the wall clock
            times.insert(rng.randrange(len(times) + 1), rng.choice([start + 200, now + max_future + rng.randrange(1, 10**12)]))
        batches.append(times)
        start += 10
    clock = PartitionClock(0, 5, max_future=max_future, max_ahead=reach, ordered=False)  # admission alone, as the shield uses it
    for times, (on_time, reasons) in zip(batches, reference_admit(batches, 5, now + max_future, reach)):
        accepted, letters = clock.admit([Event(f"k{i}", time, "E", {}) for i, time in enumerate(times)])
        assert [event.time for event in accepted] == on_time
        assert sorted(letter.reason for letter in letters) == sorted(reasons)
    assert "future" in {reason for _, reasons in reference_admit(batches, 5, now + max_future, reach) for reason in reasons}


def gate_reference(times: list[int], reach: int, held: int) -> tuple[set[int], int | None]:
    """Which of the partition's first `held` events are too old: split (sorted) at gaps longer than `reach`, those before
    the run holding the most of them (the later of equals); and where the stream then begins."""
    runs: list[list[int]] = []
    for time in sorted(times[:held]):
        if runs and time - runs[-1][-1] <= reach:
            runs[-1].append(time)
        else:
            runs.append([time])
    if len(runs) < 2:
        return set(), None
    begins = max(reversed(runs), key=len)[0]
    older = {index for index, time in enumerate(times[:held]) if time < begins}
    return (older, begins) if len(older) * 10 <= min(held, len(times)) else (set(), None)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("lateness", [0, 50])
def test_the_first_events_before_a_long_silence_are_too_old_and_nothing_else_changes(seed, lateness):
    """Streams of 150 events, a few of the first dated far before the rest (in any order among them): the too old
    ones are exactly the reference's, in any batching; the rest are admitted as by a clock without the gate."""
    rng = random.Random(seed)
    times = sorted(10_000 + rng.randrange(0, 3_000) for _ in range(150))
    for _ in range(rng.randrange(0, 14)):
        times.insert(rng.randrange(0, 20), rng.randrange(0, 500))  # ancient events among the first: a few, or too many to judge
    if seed % 3 == 0:
        times.insert(rng.randrange(0, 20), 90_000)  # and one far ahead: not where the stream begins
    expected_old, begins = gate_reference(times, 1_000, START_EVENTS)
    gated, plain = PartitionClock(0, lateness, max_gap=1_000), PartitionClock(0, lateness)
    events = [Event(f"k{index}", time, "E", {}) for index, time in enumerate(times)]
    kept = [event for index, event in enumerate(events) if index not in expected_old]
    admitted, letters, position = [], [], 0
    while position < len(events):
        size = rng.randrange(1, 40)
        accepted, rejected = gated.admit(events[position : position + size])
        admitted += accepted
        letters += rejected
        position += size
    accepted, rejected = gated.release_all()
    admitted += accepted
    letters += rejected
    too_old = [letter for letter in letters if letter.reason == "too_old"]
    named = sorted(letter.detail.split(" lies ")[0].removeprefix("event time ") for letter in too_old)
    assert named == sorted(format_instant(times[index]) for index in expected_old)
    if begins is not None:
        assert all("its partition's stream begins at" in letter.detail for letter in too_old)
    reference, reference_letters = plain.admit(kept)
    reference += plain.release_all()[0]
    assert [event.key for event in admitted] == [event.key for event in reference]
    assert sorted(letter.reason for letter in letters if letter.reason != "too_old") == sorted(letter.reason for letter in reference_letters)


def test_a_partition_that_ends_or_goes_quiet_before_its_first_hundred_events_is_judged_then():
    clock = PartitionClock(0, 0, max_gap=1_000)
    events = [Event("old", 5, "E", {}), *(Event(f"k{index}", 50_000 + index, "E", {}) for index in range(9)), Event("b", 50_010, "E", {})]
    assert clock.admit(events) == ([], [])  # held: fewer than START_EVENTS
    assert clock.high is None  # the clock has not moved
    admitted, letters = clock.release_all()
    assert [event.key for event in admitted] == [*(f"k{index}" for index in range(9)), "b"] and [letter.reason for letter in letters] == ["too_old"]
    assert clock.high == 50_010
    later, none = clock.admit([Event("c", 10, "E", {})])
    assert later == [] and [letter.reason for letter in none] == ["late"]  # begun: an old event is late now


def test_a_stream_that_starts_sparse_is_not_judged_too_old():
    """A screening and its outcome a year and a half later, alone: two parts of one event each, no outlier."""
    clock = PartitionClock(0, 0, max_gap=365 * 86_400_000)
    events = [Event("k", 0, "SCREEN", {}), Event("k", 540 * 86_400_000, "OUTCOME", {})]
    assert clock.admit(events) == ([], [])
    assert clock.release_all() == (events, [])
