"""The two stages of a group run give the file run's records, however the input is cut into batches, wherever a
partition's owner or the merge's holder dies and another goes on from its checkpoint, and whatever steps come twice.

Reference: the dataflow's file run over the same partitions (one file each); the stages here are driven by hand, with
seeded random batch sizes, crashes, interleavings and repeats standing in for what Kafka and a consumer group do."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from fairstream.compiler.load import load_plans
from fairstream.connectors.compas import compas_events
from fairstream.connectors.split import split_records
from fairstream.dataflow.group import Checkpoint, GroupMerge, GroupPartition, decode, partition_work
from fairstream.records.events import ENDED
from fairstream.runner import run_file
from tests.conftest import SPECS

SPEC = SPECS / "compas_equalized_odds.yaml"
PARTITIONS = 3
BAD_LINES = (b'{"event": "SCREEN", "id": "x1", "date": "2014-02-0', b'{"event": "SCREEN", "id": "77", "date": "2014-02-01"}', b'{"event": "SCREEN", "id": "1", "date": "2014-02-01", "race": "Other", "decile_score": 3}')


def without_emitted_at(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in record.items() if key != "emitted_at"} for record in records]


@pytest.fixture(scope="module")
def parts(compas_csv, tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("parts")
    paths = [path for path, _count in split_records(compas_events(compas_csv), lambda event: event.get("id"), out, PARTITIONS)]
    for path, bad in zip(paths, BAD_LINES):  # dead letters too: bad JSON, a missing field, a key of another partition
        lines = path.read_bytes().splitlines()
        lines.insert(len(lines) // 2, bad)
        path.write_bytes(b"\n".join(lines) + b"\n")
    return paths


@pytest.fixture(scope="module")
def file_records(parts, tmp_path_factory) -> dict[str, list[dict[str, Any]]]:
    run = run_file(SPEC, str(parts[0].parent / "*.jsonl"), tmp_path_factory.mktemp("file"))
    return {
        "alerts": without_emitted_at(run.read("alerts.jsonl")),
        "estimates": without_emitted_at(run.read("estimates.jsonl")),
        "dead_letters": without_emitted_at(run.read("dead_letters.jsonl")),
    }


def owner_steps(plans, partition: int, lines: list[bytes], rng: random.Random, log: list[bytes], crashes: int) -> None:
    """One partition's steps appended to `log` (the steps topic: each step as Kafka holds it, encoded), its owner dying
    `crashes` times: each new owner starts from the last checkpoint taken, re-reads the steps logged after it and goes
    on with batches cut anew."""
    checkpoint: Checkpoint | None = None
    crash_at = sorted(rng.sample(range(1, len(lines)), crashes))
    owner = GroupPartition(partition_work(plans, partition, PARTITIONS), partition)
    offset = 0
    while offset < len(lines) or crash_at:
        if crash_at and offset >= crash_at[0]:
            crash_at.pop(0)
            since = 0 if checkpoint is None else checkpoint.steps_offset
            replay = [step for step in map(decode, log[since:]) if step.partition == partition]
            owner = GroupPartition(partition_work(plans, partition, PARTITIONS), partition, checkpoint and decode(checkpoint.encode()), replay)
            offset = owner.next_offset or 0
            continue
        size = rng.choice([1, 7, 50, 400, 3000])
        batch = list(range(offset, min(offset + size, len(lines))))
        log.extend(step.encode() for step in owner.messages(batch, [lines[index] for index in batch]))
        offset = batch[-1] + 1 if batch else offset
        if rng.random() < 0.3 and not owner.replaying:
            checkpoint = owner.checkpoint(len(log))
    log.extend(step.encode() for step in owner.marker(ENDED))


def merged(plans, log: list[bytes], rng: random.Random, crashes: int, repeats: int) -> tuple[list[dict[str, Any]], int]:
    """The records of the merge over the logged steps, its holder dying `crashes` times (the next one starts from the
    last checkpoint, re-reading the log from there), with `repeats` steps sent twice; and the steps it dropped."""
    log = list(log)
    for _ in range(repeats):
        index = rng.randrange(len(log))
        log.insert(rng.randrange(index, len(log)) + 1, log[index])
    records: list[dict[str, Any]] = []
    merge = GroupMerge(plans, PARTITIONS)
    saved, position, dropped = None, 0, 0
    crash_at = sorted(rng.sample(range(len(log)), crashes))
    while position < len(log):
        if crash_at and position >= crash_at[0]:
            crash_at.pop(0)
            dropped += merge.duplicates
            checkpoint = None if saved is None else decode(saved)
            merge = GroupMerge(plans, PARTITIONS, checkpoint)
            position = 0 if checkpoint is None else checkpoint.steps_offset
            continue
        records.extend(merge.receive(decode(log[position])))
        position += 1
        if rng.random() < 0.1:
            saved = merge.checkpoint(position)
    return records, dropped + merge.duplicates


def interleaved(logs: list[list[bytes]], rng: random.Random) -> list[bytes]:
    """The partitions' steps in one topic: each partition's in its order, the partitions mixed at random."""
    queues = [list(log) for log in logs]
    out: list[bytes] = []
    while any(queues):
        queue = rng.choice([queue for queue in queues if queue])
        out.append(queue.pop(0))
    return out


def distinct(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records by their first writing: a record re-written after a takeover is the same record (same chain hash)."""
    seen: set[str] = set()
    out = []
    for record in records:
        if record["chain"]["hash"] not in seen:
            seen.add(record["chain"]["hash"])
            out.append(record)
    return out


@pytest.mark.parametrize(("seed", "owner_crashes", "merge_crashes", "repeats"), [(0, 0, 0, 0), (1, 2, 0, 0), (2, 0, 3, 5), (3, 3, 2, 8)])
def test_group_stages_give_the_file_runs_records(parts, file_records, seed, owner_crashes, merge_crashes, repeats):
    plans = load_plans([str(SPEC)])
    rng = random.Random(seed)
    logs: list[list[bytes]] = []
    for partition, path in enumerate(parts):
        log: list[bytes] = []
        owner_steps(plans, partition, path.read_bytes().splitlines(), rng, log, owner_crashes)
        logs.append(log)
    for log in logs:  # a partition's steps are numbered 1, 2, … once each, however often its owner died
        assert [decode(step).seq for step in log] == list(range(1, len(log) + 1))
    records, dropped = merged(plans, interleaved(logs, rng), rng, merge_crashes, repeats)
    unique = without_emitted_at(distinct(records))
    assert [record for record in unique if record["type"] == "fairness.estimate"] == file_records["estimates"]
    alert_types = {record["type"] for record in file_records["alerts"]}
    assert [record for record in unique if record["type"] in alert_types] == file_records["alerts"]
    letters = [record for record in unique if record["type"] == "pipeline.dead_letter"]
    assert sorted(letters, key=lambda letter: (letter["partition"], letter["offset"])) == sorted(file_records["dead_letters"], key=lambda letter: (letter["partition"], letter["offset"]))
    assert len(file_records["alerts"]) >= 2 and len(file_records["estimates"]) > 700 and len(file_records["dead_letters"]) >= 3
    if repeats:
        assert dropped >= repeats
    if not merge_crashes:  # without a takeover of the merge, no record is written twice
        assert len(records) == len(distinct(records))


def test_a_step_is_pickled_whole(parts):
    plans = load_plans([str(SPEC)])
    owner = GroupPartition(partition_work(plans, 0, PARTITIONS), 0)
    lines = parts[0].read_bytes().splitlines()[:500]
    [step] = owner.messages(list(range(len(lines))), lines)
    again = decode(step.encode())
    assert (again.partition, again.seq, again.last_offset, again.marker) == (0, 1, 499, None)
    assert json.dumps([type(output).__name__ for output in again.outputs]) == json.dumps([type(output).__name__ for output in step.outputs])
