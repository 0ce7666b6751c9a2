"""Bad records on the decisions topic land on `<alerts>.dlq` with their reason while the tailing monitor keeps running."""

from __future__ import annotations

import subprocess
import sys
import time

import orjson
import pytest
from confluent_kafka import Producer

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.kafka import PRODUCER_CONFIG, dead_letter_topic, ensure_topics
from fairstream.records.errors import ConnectorError
from tests.conftest import SPECS
from tests.helpers import dead_letter_shows, kept

pytestmark = pytest.mark.kafka

GOOD = {"event": "SCREEN", "id": "1", "date": "2014-01-10", "race": "Other", "sex": "Male", "age_cat": "25 - 45", "decile_score": 3}
BAD = [
    (b"{not json", "not_json"),
    (b"[1, 2]", "not_object"),
    (orjson.dumps({**GOOD, "id": None}), "null_field"),
    (orjson.dumps({**GOOD, "id": "2", "date": "yesterday"}), "bad_time"),
    (orjson.dumps({**GOOD, "id": "3", "decile_score": "high"}), "wrong_type"),
    (orjson.dumps({**GOOD, "id": "4", "event": "APPEAL"}), "unknown_kind"),
    (orjson.dumps({**GOOD, "id": "5", "date": "2013-01-10"}), "late"),
    (orjson.dumps({**GOOD, "id": "6", "event": ["SCREEN"]}), "wrong_type"),
    (orjson.dumps({**GOOD, "id": "7", "event": {"SCREEN": 1}}), "wrong_type"),
    (orjson.dumps({**GOOD, "id": "8", "date": "0001-01-01T00:00:00+14:00"}), "bad_time"),
    (orjson.dumps({**GOOD, "id": "9", "date": "9999-12-31"}), "future"),
]
"""Each with the reason it is dead-lettered for; from the kind onwards, records that used to stop the monitor (on every restart)."""


def dead_letters(bootstrap: str, topic: str) -> list[dict]:
    try:
        return list(subscribe(bootstrap, topic, poll_seconds=0.2))
    except ConnectorError:
        return []


def wait_for(bootstrap: str, topic: str, count: int, seconds: float = 60) -> list[dict]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = dead_letters(bootstrap, topic)
        if len(found) >= count:
            return found
        time.sleep(0.3)
    return dead_letters(bootstrap, topic)


def test_each_bad_record_is_dead_lettered_with_its_reason_while_the_monitor_runs(kafka_bootstrap, topic):
    alerts = f"{topic}-alerts"
    ensure_topics(kafka_bootstrap, {topic: 1})
    monitor = subprocess.Popen(
        [sys.executable, "-m", "fairstream.cli", "run", str(SPECS / "compas_equalized_odds.yaml"), "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        producer = Producer({"bootstrap.servers": kafka_bootstrap, **PRODUCER_CONFIG})
        producer.produce(topic, orjson.dumps(GOOD), b"1")
        for value, _reason in BAD:
            producer.produce(topic, value, b"x")
        producer.flush(10)
        letters = wait_for(kafka_bootstrap, dead_letter_topic(alerts), len(BAD))
        assert [(letter["reason"], kept(letter["record"])) for letter in letters] == [(reason, dead_letter_shows(value)) for value, reason in BAD]
        assert [letter["offset"] for letter in letters] == list(range(1, len(BAD) + 1))
        assert monitor.poll() is None, "the monitor stopped on bad input"

        producer.produce(topic, b"\xff\xfe", b"y")
        producer.flush(10)
        letters = wait_for(kafka_bootstrap, dead_letter_topic(alerts), len(BAD) + 1)
        assert [letter["reason"] for letter in letters][-1] == "not_json"
        assert [letter["count"] for letter in letters] == list(range(1, len(BAD) + 2))
        assert monitor.poll() is None
    finally:
        monitor.terminate()
        monitor.wait(10)


def test_huge_records_leave_small_dead_letters_and_the_run_finishes(kafka_bootstrap, topic):
    """700 KB of quotes or of 0xFF bytes used to make a dead letter over 1 MB that the broker refused, stopping the monitor on every restart."""
    ensure_topics(kafka_bootstrap, {topic: 1})
    producer = Producer({"bootstrap.servers": kafka_bootstrap, **PRODUCER_CONFIG})
    for value in (b'"' * 700_000, b"\xff" * 700_000, orjson.dumps(GOOD)):
        producer.produce(topic, value, b"k")
    producer.flush(10)
    alerts = f"{topic}-alerts"
    run = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", str(SPECS / "compas_equalized_odds.yaml"), "--bootstrap", kafka_bootstrap,
         "--topic", topic, "--alerts", alerts, "--until-end"],
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    letters = dead_letters(kafka_bootstrap, dead_letter_topic(alerts))
    assert [letter["reason"] for letter in letters] == ["record_too_large", "record_too_large"]  # past input.max_record_bytes, unread
    assert all(len(orjson.dumps(letter)) < 8_000 for letter in letters)
    assert [letter["record"] for letter in letters] == [dead_letter_shows(b'"' * 700_000), dead_letter_shows(b"\xff" * 700_000)]  # not JSON: only a hash


def test_a_topic_without_records_read_to_its_end_fails_naming_the_topic(kafka_bootstrap, topic):
    """A typo in the topic's name: the broker may create the topic on first sight, but nothing is in it."""
    ensure_topics(kafka_bootstrap, {topic: 1})
    run = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap, "--topic", topic, "--until-end"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1
    assert run.stderr == f"error: topic {topic!r} (is its name right?) held no record to monitor; pass --allow-empty if that is expected\n"
