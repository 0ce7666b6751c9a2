"""A hiring stream on a topic of two partitions for the crash tests of specs that read every decision: a decision a
minute, groups a and b 1:1, the gap moving from 0 to 0.15 at decision 5,000; and the uninterrupted run's records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from fairstream.connectors.replay import replay
from fairstream.lab.changes.streams import decisions
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
from tests.kafka.outputs import kafka_outputs
from tests.kafka.test_faults import Scenario


class HiringScenario(Scenario):
    """`count` decisions of `seed` under the spec text `spec`, replayed, and what an uninterrupted run writes."""

    def __init__(self, bootstrap: str, tmp_path: Path, name: str, spec: str, *, seed: int, count: int):
        self.bootstrap = bootstrap
        self.tmp_path = tmp_path
        self.spec = str(tmp_path / "spec.yaml")
        Path(self.spec).write_text(spec)
        self.topic = f"{name}-events"
        in_a, hired = decisions(seed, count, 5000)
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
