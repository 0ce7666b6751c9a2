"""A publishing cadence survives a crash: a monitor judging every close and writing an estimate every 2,000 closes,
SIGKILLed at random moments and resumed from its recovery store, writes (de-duplicated) the records of an
uninterrupted run: the same alerts and the same estimates, ids and hash chains included."""

from __future__ import annotations

import pytest

from tests.kafka.hiring_scenario import HiringScenario
from tests.kafka.test_faults import kill_while_reading

pytestmark = pytest.mark.kafka

SPEC = """\
monitor: hiring-cadence
input: {time: time, key: id, kind: event, kinds: {DECISION: {gender: str, hired: bool}}}
trial: {close_on: [DECISION]}
variables:
  group: {first: DECISION, field: gender}
  hired: {first: DECISION, field: hired}
metric: {type: demographic_parity, group: group, prediction: hired, groups: [a, b], threshold: 0.05}
estimator: {prior: 0.5, confidence: 10}
evaluate: {on: close}
publish: {every: 2000 closes}
"""


@pytest.mark.timeout(900)
def test_killed_at_random_moments_the_cadence_writes_what_an_uninterrupted_run_writes(kafka_bootstrap, topic, tmp_path):
    scenario = HiringScenario(kafka_bootstrap, tmp_path, topic, SPEC, seed=2, count=30_000)
    estimates, alerts = scenario.expected["estimates"], scenario.expected["alerts"]
    assert 15 <= len(estimates) < 200 and any(record["type"] == "fairness.violation" for record in alerts)  # 30,000 closes
    assert kill_while_reading(scenario, kills=3, seed=7) >= 1
    scenario.assert_nothing_lost()
