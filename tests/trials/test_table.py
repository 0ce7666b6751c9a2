"""The native table of open trials closes the same trials, in the same ticks, with the same slots, as the dict of trials
it replaces; its copies and pickles carry on as the original would."""

from __future__ import annotations

import pickle
import random
from collections import Counter

import pytest

import fairstream.trials.bucket as bucket_module
import fairstream.trials.layout as layout_module
from fairstream.records.events import Event
from fairstream.records.timefmt import DAY
from fairstream.trials.bucket import Bucket, Recipient, Report
from tests.helpers import only, plan_of

TIMED = {"trial": {"opens_on": ["SCREEN"], "close_after": "730d", "close_on": None}}
"""The unit spec with trials that close only by time: what the table holds."""

VARIABLES = {
    "the spec's variables": {},
    "an observer reading fields": {"last_race": {"last": "DECIDE", "field": "race"}, "hired": {"last": "DECIDE", "field": "hired"}},
    "windows shorter than the trial": {"soon": {"exists": "RECIDIVISM", "within": "20d"}, "later": {"exists": "RECIDIVISM", "within": "200d"}},
    "more windows than the table's array holds": {f"within_{days}": {"exists": "RECIDIVISM", "within": f"{days}d"} for days in (5, 10, 20, 40, 80)},
}
"""Variables added to the unit spec's: the table looks up what the layout's folds remembered by every path it has."""

needs_table = pytest.mark.skipif(bucket_module.PackedTrials is None, reason="the trial table was not compiled (no C compiler at install)")


def new_bucket(lateness: int, *, native: bool, monkeypatch: pytest.MonkeyPatch, max_open: int | None = None, variables: dict | None = None) -> Bucket:
    plan = plan_of(**TIMED, variables=variables or {})
    with monkeypatch.context() as patch:
        if not native:
            patch.setattr(bucket_module, "PackedTrials", None)
        made = Bucket(0, plan.layout, (Recipient(plan.outcomes),), partitions=1, lateness=lateness, tick=DAY, max_open=max_open)
    assert isinstance(made.trials, bucket_module.PackedTrials) == native
    return made


def random_batches(seed: int, lateness_days: int) -> list[tuple[list[Event], int]]:
    """Batches of events over keys short, long (past the bytes an entry holds inline) and not ASCII, reopening after
    closing, some a little out of time order (within the lateness), with each batch's latest time."""
    rng = random.Random(seed)
    names = [f"k{n}" for n in range(40)] + [f"defendant-{n:04d}-of-broward-county" for n in range(20)] + [f"häftling-{n}-é" for n in range(10)]
    batches, day, high = [], 0, 0
    for _ in range(120):
        batch = []
        for _ in range(rng.randrange(0, 90)):
            day += rng.randrange(0, 40) == 0
            time = max(0, day * DAY - rng.randrange(0, lateness_days * DAY + 1)) if lateness_days else day * DAY
            key = rng.choice(names)
            kind = rng.choice(["SCREEN", "SCREEN", "RECIDIVISM", "DECIDE"])
            race = rng.choice(["a", "b", "c", "d"]) if rng.random() < 0.9 else f"rare-{rng.randrange(200)}"
            batch.append(Event(key, time, kind, {"id": key, "race": race, "score": rng.randrange(1, 11), "hired": True}))
            high = max(high, time)
        batches.append((batch, high))
        day += rng.randrange(0, 50)
    return batches


def counted(report: Report | None) -> tuple | None:
    """A report as the merge sees it: per tick, how many trials closed with each slot tuple."""
    if report is None:
        return None
    return report.through, {tick: Counter(delta.unsettled) for tick, delta in report.deltas.items()}, report.unmatched, report.unfinished, report.evicted


def run(b: Bucket, batches: list[tuple[list[Event], int]], restart_at: int | None = None) -> list:
    """Feed the batches; at `restart_at` carry on from a pickled snapshot, as after a restart from the recovery store."""
    reports = []
    for number, (events, high) in enumerate(batches):
        if number == restart_at:
            b = pickle.loads(pickle.dumps(b.snapshot()))
        reports.append(counted(only(b.receive(0, events, high))))
    reports.append(counted(only(b.finish())))
    return reports


@needs_table
@pytest.mark.parametrize("lateness_days", [0, 3], ids=["in order", "late events"])
@pytest.mark.parametrize("profile_limit", [layout_module.PROFILE_LIMIT, 5], ids=["numbered profiles", "profile table full"])
@pytest.mark.parametrize("variables", VARIABLES.values(), ids=VARIABLES.keys())
def test_the_table_closes_the_same_trials_as_a_dict(lateness_days, profile_limit, variables, monkeypatch):
    monkeypatch.setattr(layout_module, "PROFILE_LIMIT", profile_limit)
    batches = random_batches(seed=11 + lateness_days, lateness_days=lateness_days)
    lateness = lateness_days * DAY
    expected = run(new_bucket(lateness, native=False, monkeypatch=monkeypatch, variables=variables), batches)
    closed = sum((sum(ticks.values(), Counter()) for _, ticks, *_ in filter(None, expected)), Counter())
    assert sum(closed.values()) > 200  # keys reopen: many trials closed
    if variables:
        assert len({slots[3:] for slots in closed}) > 1  # the added variables take several values
    for restart_at in (None, len(batches) // 2):
        assert run(new_bucket(lateness, native=True, monkeypatch=monkeypatch, variables=variables), batches, restart_at) == expected


@needs_table
def test_a_copy_is_independent_and_lists_the_open_trials_in_close_order(monkeypatch):
    b = new_bucket(0, native=True, monkeypatch=monkeypatch)
    long_key = "x" * 100
    only(b.receive(0, [Event(key, day * DAY, "SCREEN", {"id": key, "race": "a", "score": 8}) for day, key in enumerate(["k1", long_key, "ü"])], 2 * DAY))
    copied = b.snapshot()
    only(b.receive(0, [Event("k1", 3 * DAY, "RECIDIVISM", {"id": "k1"})], 3 * DAY))
    keys_and_states = copied.trials.states()
    assert [key for key, _ in keys_and_states] == ["k1", long_key, "ü"]
    assert [b.layout.opened(state) // DAY for _, state in keys_and_states] == [0, 1, 2]
    reoffended = [b.layout.slots(state)[2] for _, state in b.trials.states()]
    assert reoffended == [True, None, None] and [b.layout.slots(s)[2] for _, s in keys_and_states] == [None, None, None]
    assert len(b.trials) == len(copied.trials) == 3


@needs_table
def test_a_copy_outlives_its_original_and_grows_on_its_own(monkeypatch):
    """The copy holds its own key bytes: the original closing its trials and going away leaves the copy whole."""
    b = new_bucket(0, native=True, monkeypatch=monkeypatch)
    keys = [f"{'long-' * 10}{number}" if number % 3 == 0 else str(number) for number in range(200)]  # rehashes and long keys
    only(b.receive(0, [Event(key, number * 1000, "SCREEN", {"id": key, "race": "a", "score": 8}) for number, key in enumerate(keys)], 0))
    copied = b.trials.copy()
    only(b.finish())
    del b
    assert [key for key, _ in copied.states()] == keys
    more = copied.copy()
    del copied
    assert [key for key, _ in more.states()] == keys


@needs_table
def test_layouts_with_closing_events_or_kept_trials_stay_in_dicts():
    with_closing_event = plan_of()  # the unit spec closes trials on DECIDE
    assert not Bucket(0, with_closing_event.layout, (Recipient(with_closing_event.outcomes),), partitions=1, lateness=0, tick=DAY).packs
    kept = plan_of(**TIMED)
    assert not Bucket(0, kept.layout, (Recipient(kept.outcomes, keep_trials=True),), partitions=1, lateness=0, tick=DAY).packs
    assert Bucket(0, kept.layout, (Recipient(kept.outcomes),), partitions=1, lateness=0, tick=DAY).packs


@needs_table
def test_the_table_evicts_the_same_trials_as_a_dict(monkeypatch):
    """With at most 12 open trials (events in time order, keys reopening), both stores drop the same trials first and
    close the same others; a restart from a snapshot carries on alike."""
    batches = random_batches(seed=5, lateness_days=0)
    expected = run(new_bucket(0, native=False, monkeypatch=monkeypatch, max_open=12), batches)
    assert sum(report[4] for report in filter(None, expected)) > 50
    assert run(new_bucket(0, native=True, monkeypatch=monkeypatch, max_open=12), batches) == expected
    assert run(new_bucket(0, native=True, monkeypatch=monkeypatch, max_open=12), batches, restart_at=60) == expected

