"""The protected attribute kept on its own topic (AI Act Art. 10(5)): applicants' surnames and ZIP codes on one topic,
loan decisions on another, co-partitioned by the applicant's id, give the records of one file holding every event, and
no surname or ZIP code reaches the alert topics."""

from __future__ import annotations

import json

import pytest

from fairstream.connectors.replay import replay
from fairstream.connectors.synthetic.lending import lending_applications
from fairstream.paths import SPECS_DIR
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute, run_file
from tests.kafka.outputs import comparable, file_outputs, kafka_outputs

pytestmark = pytest.mark.kafka
SPEC = str(SPECS_DIR / "lending_bisg.yaml")


@pytest.mark.parametrize("partitions", [1, 2])
def test_attributes_on_their_own_topic_give_the_one_file_results(kafka_bootstrap, topic, tmp_path, partitions):
    stream = lending_applications(4000, seed=5)
    data = tmp_path / "lending.jsonl"
    data.write_text("".join(json.dumps(event) + "\n" for event in stream.events))
    one_file = comparable(file_outputs(run_file(SPEC, data, tmp_path / "file")))
    decisions, applicants = f"{topic}-decisions", f"{topic}-applicants"
    replay([event for event in stream.events if event["event"] == "DECISION"], kafka_bootstrap, decisions, partitions=partitions)
    replay([event for event in stream.events if event["event"] == "APPLICANT"], kafka_bootstrap, applicants, partitions=partitions)
    alerts = f"{topic}-alerts"
    job = Job(spec=SPEC, input=KafkaInput(bootstrap=kafka_bootstrap, topics=[decisions, applicants], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts))
    execute(job)
    merged = comparable(kafka_outputs(kafka_bootstrap, alerts))
    assert merged["estimates"] == one_file["estimates"] and merged["estimates"][-1]["trials"]["incomplete"] == 0
    assert merged["alerts"] == one_file["alerts"]
    words = set(json.dumps(merged).replace('"', " ").replace(",", " ").replace(":", " ").split())
    assert not words & {event.get("last_name") for event in stream.events} and not words & {event.get("zip_code") for event in stream.events}


@pytest.mark.timeout(900)
def test_killed_while_it_joins_the_attributes_it_loses_nothing(kafka_bootstrap, topic, tmp_path):
    """The attributes and decisions on their own topics, read as input that is not keyed: SIGKILLed at random moments
    and resumed from its recovery store (the events held for the join among what it stores), the monitor writes the
    records of an uninterrupted run."""
    from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
    from tests.kafka.test_faults import Scenario, kill_while_reading

    class ApartScenario(Scenario):
        def __init__(self):
            self.bootstrap, self.tmp_path, self.spec = kafka_bootstrap, tmp_path, SPEC
            stream = lending_applications(12_000, seed=7)
            self.topics = [f"{topic}-decisions", f"{topic}-applicants"]
            self.topic = self.topics[0]
            for name, kind in zip(self.topics, ("DECISION", "APPLICANT")):
                replay([event for event in stream.events if event["event"] == kind], kafka_bootstrap, name, partitions=2)
            reference = f"{topic}-reference"
            execute(Job(spec=SPEC, input=KafkaInput(bootstrap=kafka_bootstrap, topics=self.topics, tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=reference)))
            self.expected = kafka_outputs(kafka_bootstrap, reference)
            self.alerts = f"{topic}-alerts"

        def command(self, recovery=None):
            command = super().command(recovery)
            at = command.index("--topic")
            return [*command[:at], "--topic", self.topics[0], "--topic", self.topics[1], *command[at + 2 :]]

    scenario = ApartScenario()
    assert scenario.expected["estimates"][-1]["trials"]["incomplete"] == 0
    hits = kill_while_reading(scenario, kills=3, seed=3)
    assert hits >= 1
    scenario.assert_nothing_lost()
