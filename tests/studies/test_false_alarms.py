"""False alarms of the three verdict modes on fair hiring streams, and detection of unfair ones.

An anytime verdict is a test by betting: by Ville's inequality it fires on a fair stream with probability
at most α however often it is read. A confident verdict holds at level α at one fixed time. A point verdict
has no error level and fires on noise. Each statistical test runs a thousand streams on two processes and
drives the pure `Monitor` directly with the closed trials the flow would hand it; the first test checks
that this gives the flow's records.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

import numpy as np
import pytest
from scipy import stats

from fairstream.compiler.plan import Plan
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.lab.studies.detection import MODES, oracle_decisions, run_detection
from fairstream.lab.studies.hiring import FAIR, PART, UNFAIR, hiring_plan
from fairstream.lab.studies.runs import monitor_records, unsuppressed
from fairstream.monitor import Monitor, MonitorConfig
from fairstream.records.envelope import ESTIMATE, VIOLATION
from fairstream.records.events import RawRecord
from fairstream.records.timefmt import ceil_to
from fairstream.trials.bucket import FINISHED, Report
from fairstream.trials.outcomes import TickDelta
from fairstream.verdicts.judge import Mode

KAPPA, EPSILON, ALPHA, PRIOR = 24.0, 0.1, 0.05, 0.5
RUNS = 1000
"""Fair streams per statistical test."""
BOUNDARY = (0.5, 0.4)
"""Hire probabilities (male, female) whose gap is exactly ε: still fair, and where a verdict comes closest to α."""


def plan_of(verdict: Mode, interval: str | None = None) -> Plan:
    return hiring_plan(confidence=KAPPA, threshold=EPSILON, prior=PRIOR, verdict=verdict, alpha=ALPHA, interval=interval)


def direct_records(plan: Plan, events: list[dict[str, Any]], config: MonitorConfig | None = None) -> list[dict[str, Any]]:
    """The monitor's records over a hiring stream, without the flow.

    Each DECISION opens and closes its own trial, whose variables are the event's gender (`group`) and
    `hired`. Bucket 0 reports every trial in the tick of its close time, as the trial buckets do, and the
    other buckets report that they are finished (bucket 0 with the first decision it received); `config`
    replaces the plan's monitor settings.
    """
    config = config or unsuppressed(plan).monitor
    parse = plan.parser().parse
    deltas: dict[int, TickDelta] = {}
    for offset, raw in enumerate(events):
        event = parse(RawRecord(0, offset, raw))
        delta = deltas.setdefault(ceil_to(event.time, config.tick), TickDelta())
        values = {"group": event.fields["gender"], "hired": event.fields["hired"]}
        delta.add(plan.outcomes.of(event.time, event.key, values), keep_trial=config.needs_trials)
    monitor = Monitor(config)
    times = [parse(RawRecord(0, offset, raw)).time for offset, raw in enumerate(events)]  # every DECISION opens a trial
    records = monitor.receive(Report(0, FINISHED, deltas, first_opening=min(times)))
    for bucket in range(1, config.reporters):
        records += monitor.receive(Report(bucket, FINISHED, {}))
    return records


def without_wall_clock(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{name: value for name, value in record.items() if name != "emitted_at"} for record in records]


def alarmed(records: list[dict[str, Any]]) -> bool:
    return any(record["type"] == VIOLATION for record in records)


def last_estimate(records: list[dict[str, Any]]) -> dict[str, Any]:
    return [record for record in records if record["type"] == ESTIMATE][-1]


def over_seeds(count: Callable[[int], int]) -> int:
    """The sum of `count(seed)` over the seeds 0..RUNS-1, on two fresh processes."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        return sum(pool.map(count, range(RUNS), chunksize=50))


def daily(plan: Plan) -> MonitorConfig:
    """The plan's monitor evaluated once a day instead of after every decision: streams that start at midnight
    (decision 1, in the day's own tick) and end the same day get their last evaluation after the last decision."""
    return dataclasses.replace(plan.monitor, on_close=False)


@pytest.mark.parametrize("verdict", MODES)
def test_driving_the_monitor_directly_gives_the_flows_records(verdict):
    plan = plan_of(verdict)
    for seed in range(2):
        for scenario in (FAIR, UNFAIR):
            events = hiring_decisions(200, *scenario, seed=seed)
            assert without_wall_clock(direct_records(plan, events)) == without_wall_clock(monitor_records(plan, events))


def test_anytime_verdicts_do_not_depend_on_the_interval_kind():
    """So the thousand-stream anytime tests may use Wilson group intervals, which cost less than Beta quantiles."""

    def verdicts(plan: Plan, events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [
            (r["type"], r["event_time"], r["parts"][PART]["violated"], r["parts"][PART].get("log_wealth"))
            if r["type"] == ESTIMATE
            else (r["type"], r.get("event_time"))  # an alert, or a seal of the chain
            for r in direct_records(plan, events)
        ]

    beta, wilson = plan_of("anytime", interval="beta_credible"), plan_of("anytime", interval="wilson")
    for seed in range(5):
        for scenario in (FAIR, UNFAIR):
            events = hiring_decisions(300, *scenario, seed=seed)
            assert verdicts(beta, events) == verdicts(wilson, events)


def anytime_alarms(plan: Plan, scenario: tuple[float, float], seed: int) -> int:
    """1 when the anytime monitor raises a violation alert on the seed's stream of 300 decisions, read after each one."""
    return int(alarmed(direct_records(plan, hiring_decisions(300, *scenario, seed=seed))))


@pytest.mark.parametrize("scenario", [FAIR, pytest.param(BOUNDARY, marks=pytest.mark.slow)], ids=["fair", "boundary"])
def test_anytime_verdicts_raise_false_alarms_on_at_most_alpha_of_fair_streams(scenario):
    alarms = over_seeds(partial(anytime_alarms, plan_of("anytime", interval="wilson"), scenario))
    assert alarms / RUNS <= ALPHA


def violated_at_horizon(plan: Plan, scenario: tuple[float, float], seed: int) -> int:
    """1 when the confident verdict after the last of the seed's 500 decisions is violated.

    That verdict depends only on the counts at the last decision, so the monitor is evaluated once a day
    (`daily`) instead of after every decision.
    """
    last = last_estimate(direct_records(plan, hiring_decisions(500, *scenario, seed=seed), daily(plan)))
    assert last["trials"]["closed"] == 500
    return int(last["parts"][PART]["violated"] is True)


@pytest.mark.parametrize("scenario", [FAIR, BOUNDARY], ids=["fair", "boundary"])
def test_confident_verdicts_at_the_horizon_are_violated_on_at_most_alpha_of_fair_streams(scenario):
    """Monte Carlo slack: two standard errors of a rate of α over 1,000 streams, 2·sqrt(α(1 − α)/1000) ≈ 0.014."""
    violated = over_seeds(partial(violated_at_horizon, plan_of("confident"), scenario))
    assert violated / RUNS <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)


def test_one_daily_evaluation_judges_the_last_decision_as_the_flow_does():
    plan = plan_of("confident")
    for seed in range(2):
        for scenario in (FAIR, BOUNDARY, UNFAIR):
            events = hiring_decisions(300, *scenario, seed=seed)
            assert (
                last_estimate(direct_records(plan, events, daily(plan)))["parts"] == last_estimate(monitor_records(plan, events))["parts"]
            )


@pytest.mark.parametrize("seeds", [5, pytest.param(50, marks=[pytest.mark.slow, pytest.mark.timeout(900)])])
def test_confident_and_anytime_verdicts_detect_every_unfair_stream_and_point_verdicts_raise_more_false_alarms(seeds):
    study = run_detection(seeds, 1000, confidence=KAPPA, threshold=EPSILON, alpha=ALPHA, ratios=[(1, 1)], workers=2)
    modes = {summary.mode: summary for summary in study.modes}
    assert modes["confident"].unfair_missed == modes["anytime"].unfair_missed == 0
    assert modes["point"].fair_alarmed > max(modes["confident"].fair_alarmed, modes["anytime"].fair_alarmed)


def test_the_study_is_the_same_on_one_process_or_two():
    assert run_detection(3, 150, workers=1) == run_detection(3, 150, workers=2)


def test_the_oracle_needs_the_decisions_a_simulated_z_test_needs_for_power_0_8():
    """The closed form against a simulation of the z test it describes, at 1:1 and 1:4."""
    rng = np.random.default_rng(5)
    for share in (0.5, 0.2):
        n = round(oracle_decisions(UNFAIR, share, EPSILON, ALPHA))
        n_a = rng.binomial(n, share, 20000)
        n_b = n - n_a
        p_a, p_b = rng.binomial(n_a, UNFAIR[0]) / n_a, rng.binomial(n_b, UNFAIR[1]) / n_b
        se = np.sqrt(UNFAIR[0] * (1 - UNFAIR[0]) / n_a + UNFAIR[1] * (1 - UNFAIR[1]) / n_b)
        power = np.mean((p_a - p_b - EPSILON) / se > stats.norm.ppf(1 - ALPHA / 2))
        assert power == pytest.approx(0.8, abs=0.02)
