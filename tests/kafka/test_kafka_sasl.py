"""SASL settings reach every client of every command: against a broker that requires SCRAM authentication (tansu
with --authentication, which has no user a client could log in as), each command's first client performs a SCRAM
exchange with the configured user, and the refusal is one line that names it, without the password, within 15 s.
The dataflow's own source and sink are built with the same settings."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fairstream.connectors.broker import LocalBroker
from fairstream.runner import Job, KafkaInput, KafkaOutput, job_flow
from tests.conftest import SPECS

pytestmark = pytest.mark.kafka

PASSWORD = "pa55-w0rd-never-shown"
SASL = {
    "FAIRSTREAM_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
    "FAIRSTREAM_KAFKA_SASL_MECHANISM": "SCRAM-SHA-256",
    "FAIRSTREAM_KAFKA_SASL_USERNAME": "monitor",
    "FAIRSTREAM_KAFKA_SASL_PASSWORD": PASSWORD,
}


@pytest.fixture(scope="module")
def authenticating():
    with LocalBroker(authentication=True) as broker:
        yield broker


@pytest.mark.parametrize(
    "command",
    [
        ["replay", str(Path(__file__).parents[2] / "replay_data" / "hiring_sample.jsonl"), "--spec", str(SPECS / "hiring_demographic_parity.yaml"), "--topic", "sasl-decisions"],
        ["run", "compas_equalized_odds", "--topic", "sasl-decisions", "--until-end"],
        ["shield", "run", "hiring_energy_shield", "--topic", "sasl-decisions", "--until-end"],
        ["alerts", "--topic", "sasl-alerts"],
    ],
    ids=lambda command: " ".join(command[:2]),
)
def test_each_command_authenticates_with_the_settings_and_a_refusal_is_one_line(authenticating, command):
    environ = {name: value for name, value in os.environ.items() if not name.startswith("FAIRSTREAM_KAFKA_")}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "-v", *command, "--bootstrap", authenticating.bootstrap],
        capture_output=True, text=True, timeout=60, env={**environ, **SASL},
    )  # fmt: skip
    assert time.monotonic() - started < 15
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "SASL SCRAM authentication failed: broker responded with unknown-user" in errors[0], result.stderr
    assert PASSWORD not in result.stdout + result.stderr


def test_the_dataflows_source_and_sink_get_the_settings(kafka_bootstrap, topic, tmp_path):
    settings = tmp_path / "client.properties"
    settings.write_text("client.id=fairstream-settings-probe\nsocket.keepalive.enable=true\n")
    from fairstream.connectors.kafka import ensure_topics

    ensure_topics(kafka_bootstrap, {topic: 1})
    job = Job(
        spec="compas_equalized_odds",
        input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False),
        output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=f"{topic}-alerts"),
        kafka_config=str(settings),
    )
    flow = job_flow(job)
    steps = {step.step_id.rsplit(".", 1)[-1]: step for step in flow.substeps}
    source, sink = steps["read"].source.source, steps["write"].sink  # the Kafka source inside the partition-local one
    for config in (source._config, sink._config):  # the consumers of every partition, and the producer
        assert config["client.id"] == "fairstream-settings-probe" and config["socket.keepalive.enable"] == "true"
