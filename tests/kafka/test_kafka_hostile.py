"""The hostile records of the file-path tests, among the real COMPAS events on a two-partition topic, run with a
recovery store: each is dead-lettered with its reason, every alert and estimate equals the clean file run's, and a
restart from the store (where a crashing record used to crash again) finishes too."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from datetime import date, timedelta

import orjson
import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.replay import replay
from fairstream.runner import run_file
from tests.kafka.outputs import distinct, kafka_outputs, without_emitted_at
from tests.test_hostile_input import spec_with

pytestmark = pytest.mark.kafka

SCREEN = {"event": "SCREEN", "race": "Caucasian", "sex": "Male", "age_cat": "25 - 45", "decile_score": 9}


def hostile_records(day: str) -> list[tuple[bytes, str]]:
    """Each record that stopped the monitor before (or was lost), as sent, with its reason; `day` is the date of the
    events around it."""
    ahead = (date.fromisoformat(day) + timedelta(days=120)).isoformat()
    return [
        (orjson.dumps({**SCREEN, "id": "list", "event": ["SCREEN"], "date": day}), "wrong_type"),
        (orjson.dumps({**SCREEN, "id": "object", "event": {"SCREEN": 1}, "date": day}), "wrong_type"),
        (orjson.dumps({**SCREEN, "id": "far-east", "date": "0001-01-01T00:00:00+14:00"}), "bad_time"),
        (orjson.dumps({**SCREEN, "id": "year-9999", "date": "9999-12-31"}), "future"),
        (orjson.dumps({**SCREEN, "id": "months-ahead", "date": ahead}), "future"),
        (orjson.dumps({**SCREEN, "id": "k" * 10_000, "date": day}), "key_too_long"),
        (b'"' * 700_000, "record_too_large"),
        (b"", "not_json"),
    ]


def test_hostile_records_on_kafka_change_no_result_and_a_restart_finishes(kafka_bootstrap, topic, compas_csv, tmp_path, specs_dir):
    spec = spec_with(tmp_path, specs_dir, max_ahead="30d")
    events = compas_events(compas_csv)
    write_jsonl(tmp_path / "clean.jsonl", events)
    clean = run_file(spec, tmp_path / "clean.jsonl", tmp_path / "clean", fmt="jsonl")

    middle = len(events) // 3
    hostile = hostile_records(events[middle]["date"])
    replay([*events[:middle], *(value for value, _ in hostile), *events[middle:]], kafka_bootstrap, topic, partitions=2)
    alerts, recovery = f"{topic}-alerts", tmp_path / "recovery"
    command = [sys.executable, "-m", "fairstream.cli", "run", spec, "--bootstrap", kafka_bootstrap, "--topic", topic,
               "--alerts", alerts, "--until-end", "--recovery", str(recovery)]  # fmt: skip
    for attempt in ("first run", "restart"):
        run = subprocess.run(command, capture_output=True, timeout=240)
        assert run.returncode == 0, f"{attempt}: {run.stderr.decode()[-2000:]}"

        got = kafka_outputs(kafka_bootstrap, alerts)
        for family in ("alerts", "estimates"):
            expected = without_emitted_at(clean.read(f"{family}.jsonl"))
            assert list(distinct(got[family]).values()) == expected, (attempt, family)
        letters = distinct(got["dead_letters"]).values()
        assert Counter(letter["reason"] for letter in letters) == Counter(reason for _, reason in hostile), attempt
        assert all(len(orjson.dumps(letter)) < 20_000 for letter in letters)
    assert clean.read("dead_letters.jsonl") == []
