"""The per-monitor merge: evaluations wait for every bucket, follow event time, and alerts fire on verdict changes."""

from __future__ import annotations

import dataclasses

from fairstream.monitor import Monitor
from fairstream.records.timefmt import DAY
from fairstream.trials.bucket import FINISHED, Report
from fairstream.trials.outcomes import TickDelta
from tests.helpers import plan_of


def delta(**cells: tuple[int, int]) -> TickDelta:
    d = TickDelta()
    for group, (hits, n) in cells.items():
        d.counts[("selection_rate", group)] = [hits, n]
        d.closed += n
    return d


def monitor(buckets: int = 2, confidence: float = 0, min_cell: int = 1, min_trials: int | None = 1) -> Monitor:
    """A demographic-parity merge; by default it publishes every cell and judges every group, as these tests count single trials."""
    plan = plan_of(
        metric={"type": "demographic_parity", "label": None},
        estimator={"confidence": confidence, "min_trials": min_trials},
        publish={"min_cell": min_cell},
    )
    return Monitor(dataclasses.replace(plan.monitor, reporters=buckets))


def estimates(records):
    return [r for r in records if r["type"] == "fairness.estimate"]


def test_nothing_is_evaluated_until_every_bucket_reported_the_tick():
    m = monitor()
    assert m.receive(Report(0, 3 * DAY, {DAY: delta(a=(1, 2))})) == []
    records = m.receive(Report(1, 2 * DAY, {2 * DAY: delta(b=(0, 1))}))
    assert [r["event_time"][:10] for r in estimates(records)] == ["1970-01-02", "1970-01-03"]
    assert estimates(records)[-1]["parts"]["selection_rate"]["groups"]["b"]["trials"] == 1


def test_evaluation_order_does_not_depend_on_report_order():
    def reports():
        return [
            Report(0, 2 * DAY, {DAY: delta(a=(1, 2))}),
            Report(1, 1 * DAY, {DAY: delta(b=(0, 2))}),
            Report(1, 3 * DAY, {3 * DAY: delta(b=(2, 2))}),
            Report(0, FINISHED, {3 * DAY: delta(a=(0, 1))}),
        ]

    def run(order):
        m = monitor()
        out = []
        fresh = reports()  # the monitor owns what it receives, as in the dataflow
        for index in order:
            out.extend(m.receive(fresh[index]))
        return [{k: v for k, v in r.items() if k != "emitted_at"} for r in out]

    # each bucket reports in order (0 then 3, 1 then 2); the interleaving between buckets is arbitrary
    assert run([0, 1, 2, 3]) == run([1, 2, 0, 3]) == run([1, 0, 3, 2]) == run([0, 3, 1, 2])


def test_violation_then_recovery_fire_once_each():
    m = monitor(buckets=1)
    records = m.receive(Report(0, DAY, {DAY: delta(a=(5, 10), b=(1, 10))}))
    records += m.receive(Report(0, 2 * DAY, {2 * DAY: delta(a=(0, 0), b=(0, 0))}))
    records += m.receive(Report(0, 3 * DAY, {3 * DAY: delta(b=(8, 10))}))
    kinds = [(r["type"], r["event_time"][:10]) for r in records if r["type"] != "fairness.estimate"]
    assert kinds == [("fairness.violation", "1970-01-02"), ("fairness.recovered", "1970-01-04")]
    first = next(r for r in records if r["type"] == "fairness.violation")
    assert first["pair"] == ["a", "b"] and first["gap"] == 0.5 - 0.1


def test_alert_ids_are_deterministic():
    def ids():
        m = monitor(buckets=1)
        return [r["alert_id"] for r in m.receive(Report(0, DAY, {DAY: delta(a=(5, 10), b=(1, 10))}))]

    assert ids() == ids() and len(set(ids())) == 2


def test_every_tick_the_ended_input_reached_is_evaluated_after_the_last_closed_trial():
    """Ticks without closed trials after the last one are still evaluated, up to where the input's event time reached."""
    m = monitor(buckets=2)
    records = m.receive(Report(0, 2 * DAY, {DAY: delta(a=(1, 2))}))
    records += m.receive(Report(1, 2 * DAY, {2 * DAY: delta(b=(0, 1))}))
    records += m.receive(Report(0, FINISHED, {}, end=6 * DAY))
    records += m.receive(Report(1, FINISHED, {}, end=6 * DAY))
    assert [r["event_time"][:10] for r in estimates(records)] == [f"1970-01-0{day}" for day in range(2, 8)]


def test_trials_closed_in_a_tick_already_evaluated_count_at_the_next_one():
    """A tailed partition back from idle can close trials in a tick the merge has passed: they are counted, not dropped."""
    m = monitor(buckets=1)
    m.receive(Report(0, 2 * DAY, {DAY: delta(a=(1, 2))}))
    records = m.receive(Report(0, 3 * DAY, {DAY: delta(a=(1, 1)), 3 * DAY: delta(b=(0, 1))}))
    assert [r["event_time"][:10] for r in estimates(records)] == ["1970-01-04"]
    assert estimates(records)[0]["parts"]["selection_rate"]["groups"]["a"] == {"estimate": 2 / 3, "rate": 2 / 3, "hits": 2, "trials": 3}
    assert m.pending == {}


def test_cells_below_the_minimum_are_published_empty_while_the_verdict_counts_them():
    """Group b's 2 trials (rate 0) against a's 5 of 10: the gap 0.5 violates ε = 0.1 although b's cell, and so the gap, is withheld."""
    m = monitor(buckets=1, min_cell=3)
    records = m.receive(Report(0, DAY, {DAY: delta(a=(5, 10), b=(0, 2))}))
    estimate, violation = estimates(records)[0], next(r for r in records if r["type"] == "fairness.violation")
    for body in (estimate["parts"]["selection_rate"], violation):
        assert body["groups"] == {
            "a": {"estimate": 0.5, "rate": 0.5, "hits": 5, "trials": 10},
            "b": {"estimate": None, "rate": None, "hits": None, "trials": None, "suppressed": True},
        }
        # the gap of a pair that names a withheld cell would give the cell back: it is withheld too
        assert (body["pair"], body["gap"], body["raw_gap"], body["gap_suppressed"], body["violated"]) == (["a", "b"], None, None, True, True)
    records = m.receive(Report(0, 2 * DAY, {2 * DAY: delta(b=(1, 1))}))
    assert estimates(records)[0]["parts"]["selection_rate"]["groups"]["b"] == {"estimate": 1 / 3, "rate": 1 / 3, "hits": 1, "trials": 3}


def test_a_quiet_reporter_stops_holding_evaluations_back_until_it_reports_again():
    """An input partition quiet for a while sends an idle report: the merge evaluates by the others alone; its next
    report counts again, and what it closed in ticks already evaluated is counted at the next one."""
    m = monitor(buckets=2)
    assert m.receive(Report(0, 3 * DAY, {DAY: delta(a=(1, 2))})) == []
    records = m.receive(Report(1, -FINISHED, {}, idle=True))
    assert [r["event_time"][:10] for r in estimates(records)] == ["1970-01-02", "1970-01-03", "1970-01-04"]
    records = m.receive(Report(1, 2 * DAY, {2 * DAY: delta(b=(0, 1))}))  # back: nothing further is final until it catches up
    assert records == []
    records = m.receive(Report(1, 4 * DAY, {}))
    assert estimates(records) == []  # partition 0 is at day 3 still
    records = m.receive(Report(0, 5 * DAY, {}))
    assert [r["event_time"][:10] for r in estimates(records)] == ["1970-01-05"]
    assert estimates(records)[0]["parts"]["selection_rate"]["groups"]["b"]["trials"] == 1  # closed in an evaluated tick: counted at the next


def test_a_merge_of_reporters_that_are_all_quiet_evaluates_nothing():
    m = monitor(buckets=2)
    assert m.receive(Report(0, 3 * DAY, {DAY: delta(a=(1, 2))}, idle=True)) == []
    assert m.receive(Report(1, 2 * DAY, {}, idle=True)) == []


def test_groups_below_the_evidence_floor_are_shown_but_not_judged():
    """With the default floor at ε = 0.1 (100 trials), b's 0 of 20 against a's 50 of 100 is no violation until b has 100."""
    m = monitor(buckets=1, min_trials=None)
    records = m.receive(Report(0, DAY, {DAY: delta(a=(50, 100), b=(0, 20))}))
    body = estimates(records)[0]["parts"]["selection_rate"]
    assert body["groups"]["b"] == {"estimate": 0.0, "rate": 0.0, "hits": 0, "trials": 20, "below_floor": True}
    assert (body["gap"], body["violated"]) == (None, None)
    records = m.receive(Report(0, 2 * DAY, {2 * DAY: delta(b=(10, 80))}))
    body = next(r for r in records if r["type"] == "fairness.violation")
    assert (body["pair"], body["gap"]) == (["a", "b"], 0.5 - 0.1)
