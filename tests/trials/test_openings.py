"""A bucket of a monitor that counts open trials reports how many opened in each final tick: each trial in the tick
it opened, and one that arrives dated before the last report (back from an idle partition) at the first tick of the
next, so the openings reported less the trials closed are the trials held, report after report."""

from __future__ import annotations

from fairstream.dataflow.flow import new_bucket
from fairstream.records.timefmt import DAY
from fairstream.trials.bucket import Report
from tests.helpers import plan_of, screen


def openings(reports: list[Report]) -> dict[int, int]:
    (report,) = reports
    return {tick // DAY: delta.opened for tick, delta in report.deltas.items() if delta.opened}


def test_openings_by_tick_and_a_late_trial_at_the_next_reports_first_tick():
    plan = plan_of(triggers=[{"name": "busy", "when": "open_trials > 2"}])
    assert plan.monitor.counting.open_trials
    bucket = new_bucket([plan], partitions=1, share=1)
    assert openings(bucket.receive(0, [screen("a", 0), screen("b", 1), screen("c", 1)], 3 * DAY)) == {0: 1, 1: 2}
    assert bucket.receive(0, [screen("late", 0)], 3 * DAY) == []  # through day 2 already: nothing newly final
    assert openings(bucket.receive(0, [screen("d", 5)], 6 * DAY)) == {3: 1, 5: 1}  # the late one at day 3, after day 2
    assert openings(bucket.finish()) == {}
    assert bucket.openings == (5, 5)  # every trial opened, and every one closed at the end


def test_a_monitor_whose_triggers_do_not_read_open_trials_reports_no_openings():
    plan = plan_of(triggers=[{"name": "few", "when": "closed_trials < 2"}])
    assert not plan.monitor.counting.open_trials
    bucket = new_bucket([plan], partitions=1, share=1)
    (report,) = bucket.receive(0, [screen("a", 0), screen("b", 1)], 3 * DAY)
    assert all(delta.opened == 0 for delta in report.deltas.values())
