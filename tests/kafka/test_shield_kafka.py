"""The energy shield on the Kafka decision path: shielded decisions on `<topic>.shielded`, every flip on the alert topic,
and the monitor on the shielded topic sees the demographic-parity gap inside its target while the raw one is not."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.replay import EventFields, replay
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
from tests.conftest import SPECS

pytestmark = pytest.mark.kafka
SPEC = str(SPECS / "hiring_energy_shield.yaml")


def gap(records):
    rate = {g: [r["hired"] for r in records if r["gender"] == g] for g in ("male", "female")}
    return sum(rate["male"]) / len(rate["male"]) - sum(rate["female"]) / len(rate["female"])


def topic_exists(bootstrap, topic):
    from confluent_kafka.admin import AdminClient

    return topic in AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics


def read_all(bootstrap, topic):
    return list(subscribe(bootstrap, topic, distinct=False))


def test_shielded_decisions_and_interventions_through_kafka(kafka_bootstrap, topic):
    decisions = hiring_decisions(3000, p_male=0.5, p_female=0.2, seed=9)
    replay(decisions, kafka_bootstrap, topic, fields=EventFields("id", "time"), partitions=2)
    alerts = f"{topic}-alerts"
    execute(Job(spec=SPEC, input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts), shield=True))
    shielded = read_all(kafka_bootstrap, f"{topic}.shielded")
    interventions = [r for r in subscribe(kafka_bootstrap, alerts) if r["type"] == "shield.intervention"]
    assert sorted(r["id"] for r in shielded) == sorted(d["id"] for d in decisions)
    by_id = {d["id"]: d["hired"] for d in decisions}
    flipped = {r["id"] for r in shielded if r["hired"] != by_id[r["id"]]}
    assert flipped == {r["decision_id"] for r in interventions} and len(flipped) > 100
    assert gap(decisions) > 0.25 and -0.05 <= gap(shielded) <= 0.05

    watched = f"{topic}-watch"
    execute(Job(spec=SPEC, input=KafkaInput(bootstrap=kafka_bootstrap, topics=[f"{topic}.shielded"], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=watched)))
    last = list(subscribe(kafka_bootstrap, f"{watched}.estimates"))[-1]
    assert last["parts"]["selection_rate"]["violated"] is False


def test_the_last_decision_before_a_lull_is_answered_through_kafka(kafka_bootstrap, topic):
    """A shield that tails its topic answers every decision within about `answer_within` (1 s by default), though no
    decision follows the last one; without the clock the last one waited for the next decision for good."""
    decisions = hiring_decisions(5, p_male=0.5, p_female=0.2, seed=9)
    replay(decisions, kafka_bootstrap, topic, fields=EventFields("id", "time"), partitions=1)
    command = [sys.executable, "-m", "fairstream.cli", "shield", "run", SPEC, "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", f"{topic}-alerts"]
    shield = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    answered: list[dict] = []
    try:
        deadline = time.monotonic() + 120  # the start (synthesis, the broker) on a loaded machine; the lull itself is endless
        while len(answered) < len(decisions) and time.monotonic() < deadline and shield.poll() is None:
            answered = read_all(kafka_bootstrap, f"{topic}.shielded") if topic_exists(kafka_bootstrap, f"{topic}.shielded") else []
            time.sleep(0.5)
    finally:
        shield.terminate()
        _, errors = shield.communicate(timeout=30)
    assert sorted(record["id"] for record in answered) == [d["id"] for d in decisions], errors.decode()[-2000:]


def test_a_served_shield_writes_its_records_to_the_shield_topics(kafka_bootstrap, topic):
    """`shield serve --bootstrap`: each answer is the record on `<topic>.shielded`, every flip on the alert topic."""
    from tests.serving.server import serving

    decisions = hiring_decisions(200, p_male=0.6, p_female=0.3, seed=5)
    alerts = f"{topic}-alerts"
    with serving("--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts) as server:
        answers = [server.decide(decision) for decision in decisions]
    assert server.returncode == 0, server.output
    assert read_all(kafka_bootstrap, f"{topic}.shielded") == answers
    flips = [record for record in subscribe(kafka_bootstrap, alerts) if record["type"] == "shield.intervention"]
    assert [flip["decision_id"] for flip in flips] == [answer["id"] for answer in answers if answer["fairstream_shield"]["flipped"]]
    assert list(subscribe(kafka_bootstrap, f"{alerts}.estimates"))[-1]["decisions"] == 200
