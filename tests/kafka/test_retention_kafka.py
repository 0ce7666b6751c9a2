"""`--retention` on Kafka: the output topics a job creates keep records that long (`retention.ms`, as the broker
describes it), and an output topic made before with a shorter retention is named in one warning line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from fairstream.connectors.kafka import ensure_topics
from tests.conftest import SPECS

pytestmark = pytest.mark.kafka
SAMPLE = Path(__file__).parents[2] / "replay_data" / "hiring_sample.jsonl"
SIX_MONTHS_MS = 183 * 86_400_000


def fairstream(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", *args], capture_output=True, text=True, timeout=180)


def described(bootstrap: str, topics: list[str]) -> dict[str, str | None]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    answers = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic) for topic in topics])
    return {resource.name: getattr(future.result(10).get("retention.ms"), "value", None) for resource, future in answers.items()}


def test_the_output_topics_keep_records_for_the_retention(kafka_bootstrap, topic):
    spec = str(SPECS / "hiring_demographic_parity.yaml")
    assert fairstream("replay", str(SAMPLE), "--spec", spec, "--topic", topic, "--bootstrap", kafka_bootstrap).returncode == 0
    alerts = f"{topic}-alerts"
    ran = fairstream("run", spec, "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts, "--until-end", "--retention", "183d")
    assert ran.returncode == 0, ran.stderr
    outputs = [alerts, f"{alerts}.estimates", f"{alerts}.dlq", f"{alerts}.seals"]
    assert described(kafka_bootstrap, outputs) == dict.fromkeys(outputs, str(SIX_MONTHS_MS))
    assert described(kafka_bootstrap, [topic])[topic] != str(SIX_MONTHS_MS)  # the input topic is the producer's


def test_an_output_topic_kept_shorter_is_named_in_one_warning(kafka_bootstrap, topic):
    spec = str(SPECS / "hiring_demographic_parity.yaml")
    assert fairstream("replay", str(SAMPLE), "--spec", spec, "--topic", topic, "--bootstrap", kafka_bootstrap).returncode == 0
    alerts = f"{topic}-alerts"
    ensure_topics(kafka_bootstrap, {alerts: 1}, configs={alerts: {"retention.ms": str(7 * 86_400_000)}})
    ran = fairstream("run", spec, "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts, "--until-end", "--retention", "183d")
    assert ran.returncode == 0, ran.stderr
    warnings = [line for line in ran.stderr.splitlines() if "less than --retention" in line]
    assert warnings == [f"warning: topic {alerts!r} keeps records 1w, less than --retention 183d: the broker removes them sooner (raise its retention.ms)"]
