"""Trial states are immutable (tuples, or ints naming a profile), and a bucket that remembers outcomes by slot values counts exactly what one that keeps every trial does."""

from __future__ import annotations

import dataclasses
import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from fairstream.records.timefmt import DAY
from fairstream.trials.bucket import Bucket, Recipient
from fairstream.trials.folds import MEMO_LIMIT, PROFILE_LIMIT
from tests.helpers import only, plan_of, recid, screen, spec_dict


def bucket(keep_trials: bool, **changes) -> Bucket:
    plan = plan_of(**changes)
    return Bucket(0, plan.layout, (Recipient(plan.outcomes, keep_trials),), partitions=1, lateness=0, tick=DAY)


def random_events(seed: int, keys: int = 300) -> list:
    rng = random.Random(seed)
    events = [(rng.randrange(400), "s", f"k{k}") for k in range(keys)]
    events += [(day + rng.randrange(900), "r", key) for day, _, key in events if rng.random() < 0.5]
    events.sort()
    return [
        screen(key, day, race=rng.choice("abc"), score=rng.randrange(1, 11)) if what == "s" else recid(key, day)
        for day, what, key in events
    ]


def test_observing_an_event_returns_a_new_state_and_leaves_the_old_one_alone():
    layout = plan_of().layout
    opened = layout.open(screen("x", 0))
    later = layout.observe(opened, recid("x", 3))
    assert layout.slots(opened)[-1] is None and layout.slots(later)[-1] is True
    assert layout.opened(opened) == layout.opened(later) == 0


def test_trials_counted_by_slot_tuples_settle_to_what_kept_trials_count():
    events = random_events(seed=4)
    fast, slow = bucket(keep_trials=False), bucket(keep_trials=True)
    assert fast.by_profile and not slow.by_profile
    settle = plan_of().monitor.slot_outcomes
    counted: tuple[dict, dict] = ({}, {})

    def add(ticks: dict, deltas: dict) -> None:
        for tick, d in deltas.items():
            d.settle(settle)
            for trial in d.trials:  # kept trials reach the merge whole: counted there one by one
                d.count(trial.cells, trial.totals)
            ticks[tick] = (d.counts, d.closed, d.incomplete)

    for start in range(0, len(events), 37):
        chunk = events[start : start + 37]
        for b, ticks in zip((fast, slow), counted):
            add(ticks, only(b.receive(0, chunk, chunk[-1].time)).deltas)
    for b, ticks in zip((fast, slow), counted):
        add(ticks, only(b.finish()).deltas)
    assert len(counted[0]) > 100 and counted[0] == counted[1]


def test_float_slots_are_not_remembered_and_int_slots_are():
    variables = {
        "group": {"first": "SCREEN", "field": "score"},
        "high_risk": {"first": "SCREEN", "expr": "score > 6"},
        "reoffended": {"exists": "RECIDIVISM"},
    }
    kinds = spec_dict()["input"]["kinds"]
    floats = {"kinds": {**kinds, "SCREEN": {**kinds["SCREEN"], "score": "float"}}}
    numeric = bucket(False, variables=variables, input=floats)
    assert not numeric.layout.exact_slots and not numeric.by_profile
    assert plan_of(variables=variables, input=floats).monitor.slot_outcomes is None and plan_of().monitor.slot_outcomes is not None
    assert bucket(False, variables=variables).by_profile  # an int field refuses floats and booleans: its values are alike


def test_remembered_folds_give_the_states_of_computed_ones():
    """Opening and observing remember their slots by the values an event reads (bounded): the states stay exactly those
    computed afresh, with inputs well past the memo's size and events both inside and outside the exists window."""
    remembered = plan_of().layout
    computed = dataclasses.replace(remembered, exact_kinds=frozenset(), profiles=None)
    assert remembered.exact_kinds == {"SCREEN", "RECIDIVISM", "DECIDE"}
    rng = random.Random(7)
    events = [
        screen(f"k{k}", rng.randrange(400), race=rng.choice("abc"), score=rng.randrange(3 * MEMO_LIMIT)) for k in range(2 * MEMO_LIMIT)
    ]
    events += [recid(event.key, event.time // DAY + rng.randrange(900)) for event in events if rng.random() < 0.5]
    events.sort(key=lambda event: event.time)
    states: tuple[dict, dict] = ({}, {})
    for event in events:
        for layout, trials in zip((remembered, computed), states):
            state = trials.get(event.key)
            trials[event.key] = layout.open(event) if state is None else layout.observe(state, event)
    decoded = [
        {key: (layout.opened(state), layout.slots(state)) for key, state in trials.items()}
        for layout, trials in zip((remembered, computed), states)
    ]
    assert decoded[0] == decoded[1]
    assert {slots for _, slots in decoded[0].values()} >= {("a", True, True), ("a", True, None), ("b", False, None)}


def test_kinds_with_float_inputs_are_not_remembered():
    kinds = {"SCREEN": {"race": "str", "score": "float"}, "RECIDIVISM": {}, "DECIDE": {"race": "str", "hired": "bool"}}
    layout = plan_of(input={**spec_dict()["input"], "kinds": kinds}).layout
    assert layout.exact_slots and layout.exact_kinds == {"RECIDIVISM", "DECIDE"}


def test_worker_threads_sharing_a_layout_number_each_profile_once():
    """Worker threads of one process share the plan's layout: numbering new tuples at once never gives two one number."""
    profiles = plan_of().layout.profiles
    threads, per_thread = 8, PROFILE_LIMIT // 8
    start = threading.Barrier(threads)

    def number_all(thread: int) -> list:
        batch = [(f"t{thread}-{index}", index % 2 == 0, None) for index in range(per_thread)]
        start.wait()
        return [(slots, profiles.number(slots)) for slots in batch]

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            numbered = list(pool.map(number_all, range(threads)))
    finally:
        sys.setswitchinterval(interval)
    assert all(profiles.table[number] == slots for batch in numbered for slots, number in batch)
    assert len(profiles.table) == len(set(profiles.table)) == threads * per_thread
