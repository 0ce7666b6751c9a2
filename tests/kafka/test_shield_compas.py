"""COMPAS recommendations of a logistic regression through the Kafka path with an energy shield: the shielded
demographic-parity gap ends inside L while the raw one does not, and every flip is on the alert topic."""

from __future__ import annotations

import pytest
import yaml

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.replay import EventFields, replay
from fairstream.lab.studies.shields import dataset, recommend
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
from tests.helpers import needs_data
from tests.kafka.test_shield_kafka import read_all

pytestmark = pytest.mark.kafka
LIMIT = (-0.05, 0.05)


def final_gap(records, groups):
    rates = [sum(r["released"] for r in records if r["race"] == g) / sum(1 for r in records if r["race"] == g) for g in groups]
    return rates[0] - rates[1]


@needs_data("compas")
def test_compas_recommendations_shielded_on_kafka(kafka_bootstrap, topic, tmp_path):
    compas = dataset("compas")
    made = recommend(compas, seed=0)
    train_gap = float(made.train_decisions[made.train_groups == compas.groups[0]].mean() - made.train_decisions[made.train_groups == compas.groups[1]].mean())
    events = [
        {"event": "DECISION", "id": str(index), "time": "2020-01-01T00:00:00Z" if index == 0 else None, "race": str(group), "released": bool(decision)}
        for index, (group, decision) in enumerate(zip(made.test_groups, made.test_decisions))
    ]  # fmt: skip
    for index, event in enumerate(events):
        event["time"] = f"2020-01-{1 + index // 1440:02d}T{(index // 60) % 24:02d}:{index % 60:02d}:00Z"
    spec = {
        "monitor": "compas-release-shield",
        "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"DECISION": {"race": "str", "released": "bool"}}},
        "trial": {"close_on": ["DECISION"]},
        "variables": {"group": {"first": "DECISION", "field": "race"}, "released": {"first": "DECISION", "field": "released"}},
        "metric": {"type": "demographic_parity", "group": "group", "prediction": "released", "threshold": 0.1},
        "evaluate": {"every": "1d"},
        "shield": {
            "decisions": "DECISION", "group": "race", "decision": "released", "groups": list(compas.groups),
            "burn_in": 50, "running": [-0.1, 0.1], "limit": list(LIMIT), "raw_gap": train_gap, "steepness": 0.5, "seed": 0,
        },
    }  # fmt: skip
    path = tmp_path / "compas_shield.yaml"
    path.write_text(yaml.safe_dump(spec))
    replay(events, kafka_bootstrap, topic, fields=EventFields("id", "time"), partitions=2)
    alerts = f"{topic}-alerts"
    execute(Job(spec=str(path), input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts), shield=True))
    shielded = read_all(kafka_bootstrap, f"{topic}.shielded")
    interventions = [r for r in subscribe(kafka_bootstrap, alerts) if r["type"] == "shield.intervention"]
    raw, fair = final_gap(events, compas.groups), final_gap(shielded, compas.groups)
    assert not LIMIT[0] <= raw <= LIMIT[1] and LIMIT[0] <= fair <= LIMIT[1]
    by_id = {event["id"]: event["released"] for event in events}
    assert {r["id"] for r in shielded if r["released"] != by_id[r["id"]]} == {r["decision_id"] for r in interventions}
    assert len(shielded) == len(events) and len(interventions) > 50
