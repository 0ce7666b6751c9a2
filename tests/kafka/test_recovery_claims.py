"""A recovery store belongs to one input, partition layout and set of monitors: resuming it for another is refused in one
line with exit code 2, naming what it was made for, instead of failing inside the dataflow runtime."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.replay import replay
from fairstream.connectors.split import split_records


def fairstream(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", *args], capture_output=True, text=True, timeout=240)


def test_a_store_made_for_two_files_is_refused_for_one(compas_csv, tmp_path):
    events = compas_events(compas_csv)[:3000]
    parts = [str(path) for path, _ in split_records(events, lambda event: event.get("id"), tmp_path / "parts", 2)]
    write_jsonl(tmp_path / "one.jsonl", events)
    store = str(tmp_path / "store")
    assert fairstream("--input", parts[0], "--input", parts[1], "--out", str(tmp_path / "a"), "--recovery", store).returncode == 0
    refused = fairstream("--input", str(tmp_path / "one.jsonl"), "--out", str(tmp_path / "b"), "--recovery", store)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"error: recovery store {store} was made for files (2 partition(s)), monitor compas-equalized-odds; this run is "
        "files (1 partition(s)), monitor compas-equalized-odds: give a new --recovery directory\n"
    )


@pytest.mark.kafka
def test_a_store_made_for_one_topic_is_refused_for_another(kafka_bootstrap, topic, compas_csv, tmp_path):
    events = compas_events(compas_csv)[:3000]
    replay(events, kafka_bootstrap, topic, partitions=2)
    replay(events, kafka_bootstrap, f"{topic}-other", partitions=2)
    store = str(tmp_path / "store")
    common = ["--bootstrap", kafka_bootstrap, "--alerts", f"{topic}-alerts", "--until-end", "--recovery", store]
    assert fairstream("--topic", topic, *common).returncode == 0
    refused = fairstream("--topic", f"{topic}-other", *common)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"error: recovery store {store} was made for topic '{topic}' (2 partition(s)), monitor compas-equalized-odds; this run is "
        f"topic '{topic}-other' (2 partition(s)), monitor compas-equalized-odds: give a new --recovery directory\n"
    )
