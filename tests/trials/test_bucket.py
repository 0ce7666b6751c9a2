"""Trial buckets: trials open on their first event, close by event time even without further events, and are freed."""

from __future__ import annotations

import copy
import pickle

from fairstream.records.events import Event
from fairstream.records.timefmt import DAY
from fairstream.trials.bucket import Bucket, Recipient
from fairstream.trials.layout import PROFILE_LIMIT
from tests.helpers import only, plan_of, recid, screen, spec_dict


def bucket(partitions: int = 1, lateness: int = 0, **changes) -> Bucket:
    plan = plan_of(**changes)
    return Bucket(0, plan.layout, (Recipient(plan.outcomes),), partitions=partitions, lateness=lateness, tick=DAY)


def settled(report):
    """The report with its deltas counted into cells, as the merge does."""
    for delta in report.deltas.values():
        delta.settle(plan_of().monitor.slot_outcomes)
    return report


def closed_cells(report) -> dict[int, dict]:
    return {tick // DAY: {key: cell for key, cell in delta.counts.items()} for tick, delta in settled(report).deltas.items()}


def test_a_trial_closes_by_event_time_without_another_event_of_its_key():
    b = bucket()
    only(b.receive(0, [screen("x", 10)], 10 * DAY))
    assert only(b.receive(0, [screen("y", 700)], 700 * DAY)).deltas == {}
    report = only(b.receive(0, [screen("z", 745)], 745 * DAY))
    assert closed_cells(report) == {740: {("false_positive_rate", "a"): [1, 1]}}
    assert "x" not in b.trials and set(b.trials) == {"y", "z"}


def test_exists_within_counts_only_events_inside_the_window():
    b = bucket()
    only(b.receive(0, [screen("in", 0), screen("out", 0, score=1)], 0))
    report = only(b.receive(0, [recid("in", 730), recid("out", 731)], 731 * DAY))
    assert closed_cells(report) == {730: {("true_positive_rate", "a"): [1, 1], ("false_positive_rate", "a"): [0, 1]}}


def test_events_without_an_open_trial_are_counted_as_unmatched():
    b = bucket()
    report = only(b.receive(0, [recid("ghost", 3)], 3 * DAY))
    assert report is not None and report.unmatched == 1 and b.trials == {}


def test_a_closing_event_closes_at_its_time_and_reports_at_the_next_tick():
    b = bucket()
    decide = Event("h", 5 * DAY + 3600, "DECIDE", {"id": "h", "race": "a", "hired": True})
    report = only(b.receive(0, [decide], 5 * DAY + 3600))
    assert report.deltas == {} and b.trials == {} and len(b.due) == 1
    report = only(b.receive(0, [], 6 * DAY + 1))
    assert list(report.deltas) == [6 * DAY] and settled(report).deltas[6 * DAY].incomplete == 1


def test_no_tick_is_final_until_every_partition_has_reported():
    b = bucket(partitions=2)
    assert only(b.receive(0, [screen("x", 0)], 800 * DAY)) is None
    report = only(b.receive(1, [], 900 * DAY))
    assert report is not None and report.through == 799 * DAY and 730 * DAY in report.deltas


def test_lateness_holds_the_watermark_back():
    b = bucket(lateness=10 * DAY)
    only(b.receive(0, [screen("x", 0)], 0))
    assert only(b.receive(0, [], 735 * DAY)).deltas == {}
    assert 730 * DAY in only(b.receive(0, [], 741 * DAY)).deltas


def test_finish_closes_timed_trials_and_counts_trials_waiting_for_a_closing_event():
    b = bucket(trial={"opens_on": ["SCREEN"], "close_after": None, "close_on": ["DECIDE"]})
    only(b.receive(0, [screen("x", 0)], 0))
    report = only(b.finish())
    assert report.deltas == {} and report.unfinished == 1 and b.trials == {}


def test_snapshot_is_an_independent_copy_that_pickles():
    b = bucket()
    only(b.receive(0, [screen("w", 0, race="c", score=2), screen("v", 0, race="b"), screen("x", 0)], 0))
    copy = pickle.loads(pickle.dumps(b.snapshot()))  # with the profile table its packed trial states refer to
    only(b.receive(0, [recid("x", 3)], 3 * DAY))
    assert copy.trials["x"] != b.trials["x"]
    assert copy.layout.slots(copy.trials["w"]) == ("c", False, None)
    false_positives = {("false_positive_rate", group): [hits, 1] for group, hits in (("a", 1), ("b", 1), ("c", 0))}
    assert closed_cells(only(copy.finish())) == {730: false_positives}


def decide(key: str, day: float, race: str = "a", hired: bool = True) -> Event:
    return Event(key, int(day * DAY), "DECIDE", {"id": key, "race": race, "hired": hired})


def test_a_trial_closed_by_its_closing_event_is_not_closed_again_when_its_close_time_comes():
    b = bucket()
    reports = [
        only(b.receive(0, [screen("x", 0)], 0)),
        only(b.receive(0, [decide("x", 1)], DAY)),  # the closing event closes the first trial on day 1
        only(b.receive(0, [screen("x", 2, race="b")], 2 * DAY)),  # the key's second trial, due on day 732
        only(b.receive(0, [], 731 * DAY)),  # the first trial's schedule entry comes due on day 730
    ]
    closed = {tick // DAY: delta.closed for report in reports if report is not None for tick, delta in settled(report).deltas.items()}
    assert closed == {1: 1} and b.layout.slots(b.trials["x"])[0] == "b"
    assert {tick // DAY for tick in only(b.finish()).deltas} == {732}


def test_a_trial_reopened_at_the_same_instant_closes_once_at_its_own_close_time():
    b = bucket()
    only(b.receive(0, [screen("x", 0), decide("x", 0), screen("x", 0, race="b")], 0))
    closed = [
        (tick // DAY, delta.closed)
        for report in (only(b.receive(0, [], 800 * DAY)), only(b.finish()))
        for tick, delta in settled(report).deltas.items()
    ]
    assert sorted(closed) == [(0, 1), (730, 1)] and b.trials == {}


def test_trials_with_equal_slot_values_share_one_slots_tuple():
    b = bucket()
    only(b.receive(0, [screen("x", 0), screen("y", 1), screen("z", 2, race="c")], 2 * DAY))
    x, y, z = (b.layout.slots(b.trials[key]) for key in "xyz")
    assert x is y and x == ("a", True, None) and z is not x
    only(b.receive(0, [recid("x", 3)], 3 * DAY))
    assert b.layout.slots(b.trials["x"]) == ("a", True, True) and b.layout.slots(b.trials["y"]) is y


def test_slots_of_int_fields_are_shared_and_of_float_fields_are_not():
    """An int field refuses floats and booleans, so equal values are alike; a float field's 1.0 and 1, 0.0 and -0.0
    are equal but print differently, so its trials keep slots of their own."""
    variables = {
        "group": {"first": "SCREEN", "field": "score"},
        "high_risk": {"first": "SCREEN", "expr": "score > 6"},
        "reoffended": {"exists": "RECIDIVISM"},
    }
    whole = bucket(variables=variables)
    only(whole.receive(0, [screen("x", 0), screen("y", 1)], DAY))
    x, y = (whole.layout.slots(whole.trials[key]) for key in "xy")
    assert x == y and x is y
    kinds = copy.deepcopy(spec_dict()["input"]["kinds"])
    kinds["SCREEN"]["score"] = "float"
    numeric = bucket(variables=variables, input={"kinds": kinds})
    only(numeric.receive(0, [screen("x", 0), screen("y", 1)], DAY))
    x, y = (numeric.layout.slots(numeric.trials[key]) for key in "xy")
    assert x == y and x is not y


def test_trials_past_the_profile_table_keep_their_slots_in_the_state():
    """Past PROFILE_LIMIT distinct slot tuples, new ones are held by the trial itself; every trial still counts."""
    b = bucket()
    groups = [f"g{number}" for number in range(PROFILE_LIMIT + 50)]
    only(b.receive(0, [screen(f"k{number}", 0, race=group) for number, group in enumerate(groups)], 0))
    only(b.receive(0, [recid("k0", 1), recid(f"k{len(groups) - 1}", 1)], DAY))
    assert len(b.layout.profiles.table) == PROFILE_LIMIT
    assert [b.layout.slots(b.trials[f"k{number}"]) for number in (0, len(groups) - 1)] == [
        (groups[0], True, True),
        (groups[-1], True, True),
    ]
    cells = closed_cells(only(b.finish()))[730]
    assert len(cells) == len(groups) and sum(trials for _, trials in cells.values()) == len(groups)
    assert cells[("true_positive_rate", groups[-1])] == [1, 1] and cells[("false_positive_rate", groups[-2])] == [1, 1]


def test_the_ended_input_reports_how_far_its_latest_partition_reached():
    """A partition that ran dry early holds the watermark back; at the end every partition's latest time counts."""
    b = bucket(partitions=2)
    only(b.receive(0, [screen("x", 10)], 10 * DAY))
    only(b.receive(1, [screen("y", 11)], 11 * DAY))
    only(b.receive(1, [screen("z", 900)], 900 * DAY))  # partition 0 stays at day 10
    assert b.through == 9 * DAY
    report = only(b.finish())
    assert report.end == 899 * DAY


def test_an_idle_partition_stops_holding_the_watermark_back():
    b = bucket(partitions=2)
    only(b.receive(0, [screen("x", 10)], 10 * DAY))
    only(b.receive(1, [screen("y", 11)], 11 * DAY))
    only(b.receive(1, [screen("z", 900)], 900 * DAY))
    report = only(b.receive(0, [], 10 * DAY, idle=True))
    assert report.through == 899 * DAY and closed_cells(report) == {740: {("false_positive_rate", "a"): [1, 1]}, 741: {("false_positive_rate", "a"): [1, 1]}}


def open_keys(b: Bucket) -> list[str]:
    """The keys of the open trials, in the order they opened (native table or dict)."""
    return [key for key, _ in b.trials.states()] if hasattr(b.trials, "states") else list(b.trials)


def test_beyond_max_open_the_trials_already_open_are_kept_and_the_newest_counted():
    b = bucket(trial={"close_on": None})
    b.max_open = 3
    report = only(b.receive(0, [screen(f"k{day}", day, race="ab"[day % 2]) for day in range(5)], 4 * DAY))
    assert report.evicted == 2 and open_keys(b) == ["k0", "k1", "k2"]
    final = only(b.finish())
    assert final.evicted == 0
    assert closed_cells(final) == {730: {("false_positive_rate", "a"): [1, 1]}, 731: {("false_positive_rate", "b"): [1, 1]}, 732: {("false_positive_rate", "a"): [1, 1]}}
    full = bucket(trial={"close_on": None})
    full.max_open = 1
    only(full.receive(0, [screen("k", 0), screen("j", 1)], DAY))  # j finds no room
    report = only(full.receive(0, [screen("k", 2)], 2 * DAY))  # k's trial goes on
    assert report.evicted == 0 and open_keys(full) == ["k"]
    assert closed_cells(only(full.finish())) == {730: {("false_positive_rate", "a"): [1, 1]}}
