"""The energy shield on the Kafka decision path: shielded decisions on `<topic>.shielded`, every flip on the alert topic,
and the monitor on the shielded topic sees the demographic-parity gap inside its target while the raw one is not."""

from __future__ import annotations

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
