"""The seminar scenario generator and assignment algorithms, and the seminar spec's counts and prior over one generated stream."""

from __future__ import annotations

from collections import Counter

import pytest

from fairstream.compiler.load import load_plan
from fairstream.connectors.synthetic.seminar import (
    ALGORITHMS,
    GENDERS,
    assign,
    draw_scenario,
    gender_quota,
    seminar_events,
)
from fairstream.lab.studies.runs import monitor_records
from fairstream.lab.studies.tuning import CSP_SPEC
from fairstream.records.timefmt import time_parser

SEEDS = range(30)
parse_time = time_parser("iso")


def accepted_by_seminar(scenario, accepted):
    """Per seminar: (applicant indices in arrival order, the accepted ones among them)."""
    found = {}
    for number in range(1, len(scenario.places) + 1):
        indices = scenario.applying(number)
        found[number] = (indices, [i for i in indices if i in accepted])
    return found


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_fills_each_seminar_up_to_its_places_and_no_further(algorithm):
    for seed in SEEDS:
        scenario = draw_scenario(seed)
        for number, (indices, taken) in accepted_by_seminar(scenario, assign(algorithm, scenario, seed)).items():
            assert len(taken) == min(scenario.places[number - 1], len(indices)), (seed, number)


def test_scenarios_have_fewer_places_than_applicants_split_evenly_over_three_to_five_seminars():
    for seed in SEEDS:
        scenario = draw_scenario(seed)
        assert 3 <= len(scenario.places) <= 5
        assert 40 <= sum(scenario.places) <= 60
        assert max(scenario.places) - min(scenario.places) <= 1
        assert {applicant.gender for applicant in scenario.applicants} == set(GENDERS)
        assert all(1 <= applicant.qualification <= 10 for applicant in scenario.applicants)


def test_fcfs_accepts_the_earliest_applicants_of_each_seminar():
    for seed in SEEDS:
        scenario = draw_scenario(seed)
        for number, (indices, taken) in accepted_by_seminar(scenario, assign("FCFS", scenario, seed)).items():
            assert taken == indices[: scenario.places[number - 1]]


def test_qualification_accepts_the_most_qualified_and_the_earlier_of_equals():
    for seed in SEEDS:
        scenario = draw_scenario(seed)
        people = scenario.applicants
        for indices, taken in accepted_by_seminar(scenario, assign("Qualification", scenario, seed)).values():
            rejected = [i for i in indices if i not in taken]
            for i in taken:
                for j in rejected:
                    assert (people[i].qualification, -i) > (people[j].qualification, -j)


def test_equal_gender_acceptance_rates_differ_by_at_most_one_applicant_per_seminar():
    for seed in SEEDS:
        scenario = draw_scenario(seed)
        for indices, taken in accepted_by_seminar(scenario, assign("EqualGender", scenario, seed)).values():
            applied = Counter(scenario.applicants[i].gender for i in indices)
            accepted = Counter(scenario.applicants[i].gender for i in taken)
            if len(applied) < 2:
                continue
            rates = [accepted[g] / applied[g] for g in GENDERS]
            assert abs(rates[0] - rates[1]) <= max(1 / applied[g] for g in GENDERS) + 1e-12


def test_gender_quota_closest_rates_within_the_groups_sizes():
    assert [gender_quota(first, second, places) for first, second, places in [(10, 0, 4), (0, 10, 4), (5, 5, 0), (1, 9, 9), (9, 1, 9)]] == [4, 0, 0, 1, 8]
    for first in range(8):
        for second in range(8):
            for places in range(first + second):
                quota = gender_quota(first, second, places)
                best = min(
                    (q for q in range(max(0, places - second), min(first, places) + 1)),
                    key=lambda q: abs(q / max(first, 1) - (places - q) / max(second, 1)),
                )
                assert abs(quota / max(first, 1) - (places - quota) / max(second, 1)) == pytest.approx(
                    abs(best / max(first, 1) - (places - best) / max(second, 1))
                ), (first, second, places)


def test_random_algorithms_are_deterministic_per_seed_and_every_algorithm_sees_the_same_scenario():
    for algorithm in ALGORITHMS:
        assert seminar_events(algorithm, 7) == seminar_events(algorithm, 7)
    assert seminar_events("Randomize", 7) != seminar_events("Randomize", 8)
    applications = {algorithm: [e for e in seminar_events(algorithm, 7) if e["event"] != "ACCEPT"] for algorithm in ALGORITHMS}
    assert len({repr(events) for events in applications.values()}) == 1
    assert assign("Randomize", draw_scenario(7), 7) != assign("Randomize", draw_scenario(7), 8)


def test_a_qualification_gap_makes_accepting_the_most_qualified_favour_men():
    applied, accepted = Counter(), Counter()
    for seed in SEEDS:
        scenario = draw_scenario(seed, qualification_gap=4)
        taken = assign("Qualification", scenario, seed)
        applied.update(a.gender for a in scenario.applicants)
        accepted.update(scenario.applicants[i].gender for i in taken)
    assert accepted["male"] / applied["male"] - accepted["female"] / applied["female"] > 0.3


def test_events_apply_then_seminar_summaries_at_the_deadline_then_acceptances_in_time_order():
    events = seminar_events("Randomize", 3)
    scenario = draw_scenario(3)
    kinds = [event["event"] for event in events]
    seminars = len(scenario.places)
    assert kinds == ["APPLY"] * 100 + ["SEMINAR"] * seminars + ["ACCEPT"] * (len(events) - 100 - seminars)
    times = [parse_time(event["time"]) for event in events]
    assert times == sorted(times)
    assert all(len(event["time"]) == len("2024-01-01T00:00:00Z") for event in events)
    applies = events[:100]
    assert [e["id"] for e in applies] == [str(i) for i in range(1, 101)]
    assert all(e["seats"] == scenario.places[e["seminar"] - 1] for e in applies)
    summaries = events[100 : 100 + seminars]
    assert [(e["id"], e["places"]) for e in summaries] == [(f"seminar-{n}", p) for n, p in enumerate(scenario.places, 1)]
    assert [e["applicants"] for e in summaries] == [len(scenario.applying(n)) for n in range(1, seminars + 1)]
    accepts = events[100 + seminars :]
    assert [e["id"] for e in accepts] == [str(i + 1) for i in sorted(assign("Randomize", scenario, 3))]
    close_after = load_plan(CSP_SPEC).spec.trial.close_after
    assert max(times) < times[0] + close_after, "every ACCEPT must come before the first applicant's trial closes"


def test_the_monitor_counts_every_applicant_once_by_seminar_and_gender_under_the_exact_prior():
    events = seminar_events("Qualification", 5)
    scenario = draw_scenario(5)
    accepted = assign("Qualification", scenario, 5)
    estimates = [r for r in monitor_records(load_plan(CSP_SPEC), events) if r["type"] == "fairness.estimate"]
    seminars = len(scenario.places)
    assert len(estimates) == 100 + seminars
    assert [r["trials"]["closed"] for r in estimates] == list(range(1, 101 + seminars))
    assert estimates[-1]["trials"]["incomplete"] == seminars
    assert {r["prior"] for r in estimates[seminars:]} == {sum(scenario.places) / 100}
    assert estimates[-1]["aggregates"] == {"applicants": 100.0, "places": float(sum(scenario.places))}
    for number in range(1, seminars + 1):
        cells = estimates[-1]["parts"][f"selection_rate[seminar={number}]"]["groups"]
        for gender in GENDERS:
            indices = [i for i in scenario.applying(number) if scenario.applicants[i].gender == gender]
            assert (cells[gender]["hits"], cells[gender]["trials"]) == (len(accepted.intersection(indices)), len(indices))
