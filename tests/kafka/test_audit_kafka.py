"""The audit commands on a job's Kafka topics: `fairstream report --bootstrap` writes the tables the file run's report
has, `fairstream verify --bootstrap` checks the topics' chains, and `fairstream incident --bootstrap` bundles the
records the file run's bundle holds."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute, run_file
from tests.conftest import SPECS


def without_emitted_at(body: bytes) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != "emitted_at"} for line in body.splitlines()]

pytestmark = pytest.mark.kafka
SPEC = str(SPECS / "compas_bias_audit.yaml")


def fairstream(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", *args], capture_output=True, text=True, timeout=180)


def test_the_report_and_verify_read_a_jobs_topics(kafka_bootstrap, topic, compas_csv, tmp_path):
    replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=2)
    alerts = f"{topic}-alerts"
    execute(Job(spec=SPEC, input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts)))
    run_file(SPEC, compas_csv, tmp_path / "file-run")
    from_kafka = fairstream("report", "--bootstrap", kafka_bootstrap, "--alerts", alerts, "--out", str(tmp_path / "kafka" / "report.html"))
    from_file = fairstream("report", str(tmp_path / "file-run"), "--out", str(tmp_path / "file" / "report.html"))
    assert from_kafka.returncode == 0 and from_file.returncode == 0, from_kafka.stderr + from_file.stderr
    tables = sorted(path.name for path in (tmp_path / "file" / "report_tables").iterdir())
    assert len(tables) == 6 and tables == sorted(path.name for path in (tmp_path / "kafka" / "report_tables").iterdir())
    for name in tables:
        assert (tmp_path / "kafka" / "report_tables" / name).read_text() == (tmp_path / "file" / "report_tables" / name).read_text(), name
    verified = fairstream("verify", "--bootstrap", kafka_bootstrap, "--alerts", alerts)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("verified ") and "monitor/compas-bias-audit" in verified.stdout


def test_an_incident_bundle_of_a_jobs_topics_is_the_file_runs_bundle(kafka_bootstrap, topic, compas_csv, tmp_path):
    replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=2)
    alerts = f"{topic}-alerts"
    execute(Job(spec=SPEC, input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=alerts)))
    run_file(SPEC, compas_csv, tmp_path / "file-run")
    violation = next(line for line in (tmp_path / "file-run" / "alerts.jsonl").read_text().splitlines() if '"fairness.violation"' in line)
    alert_id = violation.split('"alert_id":"')[1].split('"')[0]
    made = fairstream("incident", "--bootstrap", kafka_bootstrap, "--alerts", alerts, "--alert", alert_id, "--out", str(tmp_path / "kafka.zip"))
    assert made.returncode == 0, made.stderr
    with zipfile.ZipFile(tmp_path / "kafka.zip") as archive:
        archive.extractall(tmp_path / "unpacked")
    verified = fairstream("verify", str(tmp_path / "unpacked"))
    assert verified.returncode == 0 and f"incident bundle of alert {alert_id}" in verified.stdout, verified.stderr
    from_file = fairstream("incident", str(tmp_path / "file-run"), "--alert", alert_id, "--out", str(tmp_path / "file.zip"))
    assert from_file.returncode == 0, from_file.stderr
    with zipfile.ZipFile(tmp_path / "file.zip") as file_bundle, zipfile.ZipFile(tmp_path / "kafka.zip") as kafka_bundle:
        for name in ("alerts.jsonl", "estimates.jsonl", "seals.jsonl"):
            assert without_emitted_at(kafka_bundle.read(name)) == without_emitted_at(file_bundle.read(name)), name
