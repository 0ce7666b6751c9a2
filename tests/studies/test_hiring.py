"""The hiring stream generator, the monitor's per-decision estimates against a plain recomputation, and the hiring study."""

from __future__ import annotations

import math

import pytest

from fairstream.compiler.load import load_plan
from fairstream.connectors.synthetic.hiring import count_by_gender, hiring_decisions
from fairstream.lab.studies.hiring import SPEC_PATH, Run, hiring_plan, monitor_records, run_study, summarize, summarize_run

PRIOR, KAPPA, EPSILON = 0.5, 24, 0.1


def test_generator_draws_genders_and_hires_with_the_given_probabilities():
    n = 40_000
    counts = {c.gender: c for c in count_by_gender(hiring_decisions(n, 0.5, 0.2, seed=11))}
    assert counts["male"].applicants + counts["female"].applicants == n
    assert abs(counts["male"].applicants - n / 2) < 4 * math.sqrt(n / 4)
    for gender, p in (("male", 0.5), ("female", 0.2)):
        group = counts[gender]
        assert abs(group.hire_rate - p) < 4 * math.sqrt(p * (1 - p) / group.applicants)


def test_generator_is_deterministic_per_seed_and_grows_by_prefix():
    stream = hiring_decisions(300, 0.5, 0.2, seed=4)
    assert stream == hiring_decisions(300, 0.5, 0.2, seed=4)
    assert stream != hiring_decisions(300, 0.5, 0.2, seed=5)
    assert hiring_decisions(500, 0.5, 0.2, seed=4)[:300] == stream


def test_generator_writes_one_decision_a_minute_with_unique_ids():
    stream = hiring_decisions(3, 0.5, 0.5, seed=0)
    assert [d["id"] for d in stream] == ["1", "2", "3"]
    assert [d["time"] for d in stream] == ["2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z"]
    assert all(d["event"] == "DECISION" and d["gender"] in ("male", "female") and type(d["hired"]) is bool for d in stream)


def test_generator_rejects_a_probability_outside_zero_one():
    with pytest.raises(ValueError, match=r"^p_female is a probability in \[0, 1\]; got 1.2$"):
        hiring_decisions(3, 0.5, 1.2, seed=0)


def running_verdicts(stream):
    """Per decision: the MAP hire rate of every gender seen so far, the gap, and whether it exceeds ε."""
    hires: dict[str, int] = {}
    seen: dict[str, int] = {}
    for decision in stream:
        gender = decision["gender"]
        seen[gender] = seen.get(gender, 0) + 1
        hires[gender] = hires.get(gender, 0) + decision["hired"]
        estimates = {g: (hires[g] + PRIOR * KAPPA) / (seen[g] + KAPPA) for g in sorted(seen)}
        gap = max(estimates.values()) - min(estimates.values()) if len(estimates) == 2 else None
        yield estimates, gap, None if gap is None else gap > EPSILON


def test_monitor_estimates_every_decision_as_a_running_count_does():
    stream = hiring_decisions(400, 0.5, 0.2, seed=3)
    records = monitor_records(load_plan(SPEC_PATH), stream)
    estimates = [r for r in records if r["type"] == "fairness.estimate"]
    expected = list(running_verdicts(stream))
    assert len(estimates) == len(stream)
    for index, (record, (rates, gap, violated)) in enumerate(zip(estimates, expected), 1):
        body = record["parts"]["selection_rate"]
        assert record["trials"]["closed"] == index
        assert {g: cell["estimate"] for g, cell in body["groups"].items()} == rates
        assert (body["gap"], body["violated"]) == (gap, violated)

    verdicts = [violated for _, _, violated in expected]
    turns = violation_turns(verdicts)
    assert summarize_run(3, records) == Run(3, len(turns), turns[0], violated_from(verdicts))


def violation_turns(verdicts):
    """1-based decisions at which the verdict turns to violated; an undefined verdict changes nothing."""
    state, turns = False, []
    for index, violated in enumerate(verdicts, 1):
        if violated is not None and violated != state:
            state = violated
            if violated:
                turns.append(index)
    return turns


def violated_from(verdicts):
    """The 1-based decision from which every verdict is violated, or None."""
    start = len(verdicts)
    while start > 0 and verdicts[start - 1] is True:
        start -= 1
    return start + 1 if start < len(verdicts) else None


def test_summary_statistics_over_runs():
    fair = [Run(0, 0, None, None), Run(1, 2, 30, None), Run(2, 1, 40, 450)]
    unfair = [Run(0, 1, 10, 10), Run(1, 3, 20, 50), Run(2, 2, 30, 90)]
    s = summarize(fair, unfair)
    assert (s.seeds, s.fair_triggered, s.fair_ended_violated, s.unfair_settled) == (3, 2, 1, 3)
    assert (s.onset_median, s.onset_p10, s.onset_p90, s.onset_max, s.first_trigger_median) == (50.0, 18.0, 82.0, 90, 20.0)
    assert summarize(fair, [*unfair, Run(3, 1, 5, None)]).onset_max is None


def test_unfair_streams_are_flagged_for_good_and_fair_ones_end_unflagged():
    decisions = 300
    study = run_study(hiring_plan(confidence=KAPPA, threshold=EPSILON, prior=PRIOR), seeds=10, decisions=decisions)
    assert [run.seed for run in study.fair] == [run.seed for run in study.unfair] == list(range(10))
    assert study.summary.unfair_settled == 10
    assert all(run.first_trigger <= run.onset < decisions for run in study.unfair)
    assert study.summary.fair_ended_violated <= 1
