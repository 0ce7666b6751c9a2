"""Partition-local trials on files: COMPAS split by key into 2 and 4 files, read by 1, 2 and 4 processes, writes what the
single file writes; a key on the wrong file is a `wrong_partition` dead letter; the files hold each key where Kafka's
own partitioner (kafka-python's murmur2, an independent implementation) would put it."""

from __future__ import annotations

import orjson
import pytest
import yaml
from kafka.partitioner.default import murmur2 as kafka_murmur2

from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.split import split_records
from fairstream.runner import FileInput, FileOutput, FileRun, Job, execute, run_file
from fairstream.trials.placement import crc32_partitions, murmur2, murmur2_partitions
from tests.conftest import needs_bytewax
from tests.helpers import dead_letter_shows, under_any_spec
from tests.test_compas_reference import without_emitted_at

pytestmark = needs_bytewax

SPEC = "compas_equalized_odds"
FAMILIES = ("alerts.jsonl", "estimates.jsonl", "dead_letters.jsonl")


def kafka_partition(key: str, partitions: int) -> int:
    return (kafka_murmur2(key.encode()) & 0x7FFFFFFF) % partitions


def run_parts(paths, out, *, processes: int = 1, spec: str = SPEC) -> FileRun:
    job = Job(spec=spec, input=FileInput(path=[str(path) for path in paths], format="jsonl"), output=FileOutput(out_dir=str(out)))
    execute(job, processes=processes)
    return FileRun(out)


def outputs(run: FileRun) -> dict[str, list]:
    return {family: without_emitted_at(run.read(family)) for family in FAMILIES}


@pytest.fixture(scope="module")
def events(compas_csv):
    return compas_events(compas_csv)


@pytest.fixture(scope="module")
def single(events, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("single")
    write_jsonl(tmp / "events.jsonl", events)
    return outputs(run_file(SPEC, tmp / "events.jsonl", tmp / "out", fmt="jsonl"))


@pytest.fixture(scope="module")
def splits(events, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("splits")
    return {partitions: [path for path, _ in split_records(events, lambda e: e.get("id"), tmp / str(partitions), partitions)] for partitions in (2, 4)}


@pytest.mark.parametrize("partitions", [2, 4])
def test_split_files_hold_each_key_where_kafka_puts_it(splits, partitions):
    for index, path in enumerate(splits[partitions]):
        keys = {str(orjson.loads(line)["id"]) for line in path.read_bytes().splitlines()}
        assert keys and all(kafka_partition(key, partitions) == index for key in keys)


@pytest.mark.parametrize(("partitions", "processes"), [(2, 1), (2, 2), (4, 1), (4, 2), (4, 4)])
def test_split_files_on_any_number_of_processes_write_what_the_single_file_writes(single, splits, tmp_path, partitions, processes):
    assert single["alerts.jsonl"] and single["estimates.jsonl"]
    assert outputs(run_parts(splits[partitions], tmp_path / "out", processes=processes)) == single


def test_the_tallies_of_several_processes_merge_into_what_the_outputs_hold(events, splits, tmp_path):
    """The summary a run prints comes from its processes' tallies: read count, alert counts, the last evaluation and the
    first violation of every pair, checked against the files the run wrote."""
    job = Job(spec=SPEC, input=FileInput(path=[str(path) for path in splits[4]], format="jsonl"), output=FileOutput(out_dir=str(tmp_path)))
    tally = execute(job, processes=2)
    written = FileRun(tmp_path)
    estimates, alerts = written.read("estimates.jsonl"), written.read("alerts.jsonl")
    (monitor,) = tally.monitors.values()
    assert tally.read == len(events) and tally.dead_letters == {}
    assert monitor.estimates == len(estimates) and monitor.last == estimates[-1]
    assert monitor.violations == sum(1 for alert in alerts if alert["type"] == "fairness.violation")
    assert monitor.recoveries == len(alerts) - monitor.violations
    firsts = {}  # the first evaluation naming each pair as violated
    for record in estimates:
        for part, body in record["parts"].items():
            if body.get("violated") and body.get("pair"):
                firsts.setdefault((part, *body["pair"]), record["event_time"])
    assert len(firsts) == 3
    assert {(v.part, v.high, v.low): v.event_time for v in monitor.first_violations()} == firsts


def test_an_event_on_the_wrong_file_is_a_wrong_partition_dead_letter(events, tmp_path):
    """One SCREEN moved from the file of its key to the other: it is dead-lettered, and the rest gives what the input without it gives."""
    stray = next(event for event in events if event["event"] == "SCREEN" and kafka_partition(str(event["id"]), 2) == 1)
    kept = [event for event in events if event is not stray]
    write_jsonl(tmp_path / "kept.jsonl", kept)
    expected = outputs(run_file(SPEC, tmp_path / "kept.jsonl", tmp_path / "expected", fmt="jsonl"))
    zero = [event for event in kept if kafka_partition(str(event["id"]), 2) == 0]
    one = [event for event in kept if kafka_partition(str(event["id"]), 2) == 1]
    position = next(index for index, event in enumerate(zero) if event["date"] >= stray["date"])
    write_jsonl(tmp_path / "part-0.jsonl", [*zero[:position], stray, *zero[position:]])
    write_jsonl(tmp_path / "part-1.jsonl", one)
    got = outputs(run_parts([tmp_path / "part-0.jsonl", tmp_path / "part-1.jsonl"], tmp_path / "got", processes=2))
    letters = got.pop("dead_letters.jsonl")
    assert [(letter["reason"], letter["partition"], letter["offset"]) for letter in letters] == [("wrong_partition", 0, position)]
    assert "belongs to partition 1" in letters[0]["detail"] and orjson.loads(letters[0]["record"]) == dead_letter_shows(stray)
    assert got == {family: records for family, records in expected.items() if family != "dead_letters.jsonl"}


def test_with_the_check_off_a_stray_key_is_not_dead_lettered(events, tmp_path, specs_dir):
    spec = yaml.safe_load((specs_dir / "compas_equalized_odds.yaml").read_text())
    spec["input"]["partitioner"] = "none"
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    moved = [{**event, "id": "stray"} if index == 0 else event for index, event in enumerate(events)]
    write_jsonl(tmp_path / "a.jsonl", moved[:10])
    write_jsonl(tmp_path / "b.jsonl", moved[10:])
    run = run_parts([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], tmp_path / "out", spec=str(tmp_path / "spec.yaml"))
    assert run.read("dead_letters.jsonl") == [] and run.read("estimates.jsonl")


def test_input_that_is_not_keyed_goes_through_trial_buckets_with_the_same_results(single, splits, tmp_path, specs_dir):
    spec = yaml.safe_load((specs_dir / "compas_equalized_odds.yaml").read_text())
    spec["input"]["keyed"] = False
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    unkeyed = outputs(run_parts(splits[2], tmp_path / "out", processes=2, spec=str(tmp_path / "spec.yaml")))
    assert {family: under_any_spec(records) for family, records in unkeyed.items()} == {family: under_any_spec(records) for family, records in single.items()}


def test_the_compiled_and_python_partitioners_agree_with_kafka_and_zlib():
    import zlib

    keys = [str(number) for number in range(5000)] + ["", "é", "ü" * 7, "x" * 300]
    assert murmur2_partitions(keys, 7) == [kafka_partition(key, 7) for key in keys]
    assert [(murmur2(key.encode()) & 0x7FFFFFFF) % 7 for key in keys] == [kafka_partition(key, 7) for key in keys]
    assert crc32_partitions(keys, 5) == [zlib.crc32(key.encode()) % 5 for key in keys]
