"""On the Kafka path, alerts a notification endpoint never accepts are written down on the dead-letter topic as
`pipeline.undelivered` records, one per alert on the alert topic, and the run's chains still verify beside them."""

from __future__ import annotations

import pytest

from fairstream.audit.sources import topic_records
from fairstream.audit.verify import verify_chains
from fairstream.connectors.alerts import subscribe
from fairstream.connectors.broker import free_ports
from fairstream.connectors.compas import compas_events
from fairstream.connectors.kafka import dead_letter_topic
from fairstream.connectors.replay import replay
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute
from tests.conftest import SPECS

pytestmark = pytest.mark.kafka


def test_alerts_no_endpoint_accepts_are_on_the_dead_letter_topic(kafka_bootstrap, topic, compas_csv):
    replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=2)
    alerts = f"{topic}-alerts"
    (port,) = free_ports(1)  # nothing listens there
    tally = execute(
        Job(
            spec=str(SPECS / "compas_equalized_odds.yaml"),
            input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False),
            output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts),
            webhooks=[f"http://127.0.0.1:{port}/hook"],
        )
    )
    written = list(subscribe(kafka_bootstrap, alerts))
    notices = [record for record in subscribe(kafka_bootstrap, dead_letter_topic(alerts), distinct=False) if record["type"] == "pipeline.undelivered"]
    assert written and sorted(notice["record"]["alert_id"] for notice in notices) == sorted(alert["alert_id"] for alert in written)
    assert {notice["endpoint"] for notice in notices} == {f"http://127.0.0.1:{port}/…"} and all(notice["target"] == "webhook" for notice in notices)
    assert tally.notifications == {"sent": 0, "failed": len(written), "undelivered": len(written)}
    chains = verify_chains(topic_records(kafka_bootstrap, alerts))
    assert chains.intact and chains.notices == len(written), chains.breaks[:3]
