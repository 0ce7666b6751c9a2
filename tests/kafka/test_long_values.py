"""Valid JSON whose group values are 100,000 characters long cannot crash a Kafka job: each such record is a
`value_too_long` dead letter of bounded size, the run finishes with the clean run's alerts, and a restart from the same
recovery store finishes too instead of failing on the same record."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import EventFields, replay
from fairstream.runner import run_file
from tests.kafka.outputs import kafka_outputs, without_emitted_at

pytestmark = pytest.mark.kafka


def test_twelve_records_with_huge_group_values_are_dead_letters_and_a_restart_does_not_loop(kafka_bootstrap, topic, compas_csv, tmp_path):
    events = compas_events(compas_csv)
    huge = [{**event, "id": f"huge-{index}", "race": "x" * 100_000} for index, event in enumerate(e for e in events if e["event"] == "SCREEN") if index < 12]
    stream = [*events[:5000], *huge, *events[5000:]]
    replay(stream, kafka_bootstrap, topic, fields=EventFields("id", "date"), partitions=2)
    alerts = f"{topic}-alerts"
    command = [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap, "--topic", topic,
               "--alerts", alerts, "--until-end", "--recovery", str(tmp_path / "store")]  # fmt: skip
    first = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert first.returncode == 0, first.stderr
    assert "dead letters: 12 (value_too_long: 12)" in first.stdout
    written = kafka_outputs(kafka_bootstrap, alerts)
    assert len(written["dead_letters"]) == 12 and all(len(orjson.dumps(letter)) < 4_000 for letter in written["dead_letters"])
    assert all('"race":"<redacted>"' in letter["record"] for letter in written["dead_letters"])
    clean = run_file("compas_equalized_odds", compas_csv, tmp_path / "clean")
    assert without_emitted_at(written["alerts"]) == without_emitted_at(clean.read("alerts.jsonl"))

    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr
    assert len(kafka_outputs(kafka_bootstrap, alerts)["dead_letters"]) == 12  # nothing re-read, nothing rewritten
