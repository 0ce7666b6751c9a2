"""A publishing cadence survives a crash: a monitor judging every close and writing an estimate every 2,000 closes,
SIGKILLed at random moments and resumed from its recovery store, writes (de-duplicated) the records of an
uninterrupted run: the same alerts and the same estimates, ids and hash chains included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fairstream.connectors.replay import replay
from fairstream.lab.changes.streams import decisions
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
from tests.kafka.outputs import kafka_outputs
from tests.kafka.test_faults import Scenario, kill_while_reading

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


class CadenceScenario(Scenario):
    """Hiring decisions a minute apart whose gap moves from 0 to 0.15 at decision 5,000, on a topic of two partitions."""

    def __init__(self, bootstrap: str, tmp_path: Path, name: str):
        self.bootstrap = bootstrap
        self.tmp_path = tmp_path
        self.spec = str(tmp_path / "spec.yaml")
        Path(self.spec).write_text(SPEC)
        self.topic = f"{name}-events"
        in_a, hired = decisions(2, 30_000, 5000)
        start = datetime(2026, 1, 1, tzinfo=UTC)
        events = [
            {"time": (start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ"), "id": f"D{i}", "event": "DECISION", "gender": "a" if a else "b", "hired": bool(h)}
            for i, (a, h) in enumerate(zip(in_a, hired))
        ]  # fmt: skip
        replay(events, bootstrap, self.topic, partitions=2)
        reference = f"{name}-reference"
        execute(Job(spec=self.spec, input=KafkaInput(bootstrap=bootstrap, topics=[self.topic], tail=False), output=KafkaOutput(bootstrap=bootstrap, alerts=reference)))
        self.expected = kafka_outputs(bootstrap, reference)
        self.alerts = f"{name}-alerts"


@pytest.mark.timeout(900)
def test_killed_at_random_moments_the_cadence_writes_what_an_uninterrupted_run_writes(kafka_bootstrap, topic, tmp_path):
    scenario = CadenceScenario(kafka_bootstrap, tmp_path, topic)
    estimates, alerts = scenario.expected["estimates"], scenario.expected["alerts"]
    assert 15 <= len(estimates) < 200 and any(record["type"] == "fairness.violation" for record in alerts)  # 30,000 closes
    assert kill_while_reading(scenario, kills=3, seed=7) >= 1
    scenario.assert_nothing_lost()
