"""Three specs in one Kafka job (one consume, one parse) write, monitor by monitor, the alerts and estimates of
three separate runs, all on the same alert and estimates topics."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import replay
from fairstream.runner import run_file
from tests.kafka.outputs import distinct, kafka_outputs, without_emitted_at
from tests.test_several_monitors import TOGETHER

pytestmark = pytest.mark.kafka


def test_three_specs_in_one_kafka_job_equal_three_separate_runs(kafka_bootstrap, topic, compas_csv, tmp_path):
    replay(compas_events(compas_csv), kafka_bootstrap, topic, partitions=2)
    alerts = f"{topic}-alerts"
    together = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", *TOGETHER, "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts, "--until-end"],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert together.returncode == 0, together.stderr
    got = kafka_outputs(kafka_bootstrap, alerts)
    for name in TOGETHER:
        separate = run_file(name, compas_csv, tmp_path / name)
        monitor = separate.read("estimates.jsonl")[0]["monitor"]
        for family in ("alerts", "estimates"):
            mine = [record for record in distinct(got[family]).values() if record["monitor"] == monitor]
            assert mine == without_emitted_at(separate.read(f"{family}.jsonl")), (name, family)
    assert {record["monitor"] for record in got["alerts"]} == {"compas-equalized-odds", "compas-demographic-parity-sex", "compas-disparate-impact"}
