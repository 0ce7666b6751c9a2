"""Change verdicts survive a crash: the monitor SIGKILLed at random moments and resumed from its recovery store writes,
de-duplicated, the records of an uninterrupted run, its `fairness.changed` among them with the same id."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fairstream.connectors.replay import replay
from fairstream.lab.changes.streams import decisions
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
from tests.kafka.outputs import kafka_outputs
from tests.kafka.test_faults import Scenario, kill_while_reading
from tests.test_change_verdicts import SPEC

pytestmark = pytest.mark.kafka


class ChangeScenario(Scenario):
    """Hiring decisions whose gap moves at decision 5,000, on a topic of two partitions."""

    def __init__(self, bootstrap: str, tmp_path: Path, name: str):
        self.bootstrap = bootstrap
        self.tmp_path = tmp_path
        self.spec = str(tmp_path / "spec.yaml")
        Path(self.spec).write_text(SPEC)
        self.topic = f"{name}-events"
        in_a, hired = decisions(1, 40_000, 5000)
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
def test_killed_at_random_moments_the_change_is_found_once_with_its_id(kafka_bootstrap, topic, tmp_path):
    scenario = ChangeScenario(kafka_bootstrap, tmp_path, topic)
    changes = [record for record in scenario.expected["alerts"] if record["type"] == "fairness.changed"]
    assert len(changes) == 1, json.dumps(scenario.expected["alerts"])[:500]
    hits = kill_while_reading(scenario, kills=3, seed=5)
    assert hits >= 1
    scenario.assert_nothing_lost()
