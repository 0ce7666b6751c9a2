"""The audit commands on a job's Kafka topics: `fairstream report --bootstrap` writes the tables the file run's report
has, and `fairstream verify --bootstrap` checks the topics' chains."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from fairstream.runner import Job, KafkaInput, KafkaOutput, execute, run_file
from tests.conftest import SPECS

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
