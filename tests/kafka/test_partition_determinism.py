"""The determinism contract across paths and partitionings: the file path and Kafka topics of 1, 2 and 4 partitions,
read by one worker or two processes, write the same alerts, estimates, dead letters, shield interventions and
shielded decisions, on streams with silent partitions, an empty partition, a hot key, a sparse tail and events at the
lateness bound (`tests/streams.py`)."""

from __future__ import annotations

import orjson
import pytest

from fairstream.connectors.replay import EventFields, replay
from fairstream.records.timefmt import DAY, time_parser
from fairstream.runner import FileInput, FileOutput, FileRun, Job, KafkaInput, KafkaOutput, execute, run_file
from tests.conftest import SPECS
from tests.kafka.outputs import comparable, file_outputs, kafka_outputs, position_free, without_emitted_at
from tests.streams import compas_spec, hard_compas_events, hard_hiring_decisions

pytestmark = pytest.mark.kafka

LAYOUTS = {"1 partition": (1, 1), "2 partitions": (2, 1), "4 partitions": (4, 1), "4 partitions, 2 processes": (4, 2), "4 partitions, 4 processes": (4, 4)}
"""Kafka runs: (partitions of the input topic, worker processes)."""


def write_lines(path, records) -> None:
    with path.open("wb") as handle:
        for record in records:
            handle.write((orjson.dumps(record) if isinstance(record, dict) else record.encode()) + b"\n")


def matrix(bootstrap, tmp_path, records, spec, *, fields: EventFields | None = None, shield=False):
    """The outputs of the file run and of every Kafka layout, by name (the file read as it is, a stream in the order a
    replay sends it: a file is otherwise sorted first)."""
    write_lines(tmp_path / "events.jsonl", records)
    file_run = _shield_file(spec, tmp_path) if shield else run_file(spec, tmp_path / "events.jsonl", tmp_path / "file-out", fmt="jsonl", presorted=True)
    runs = {"file": file_outputs(file_run)}
    for name, (partitions, processes) in LAYOUTS.items():
        topic = f"{tmp_path.name}-{partitions}-{processes}"
        replay(records, bootstrap, topic, fields=fields or EventFields(), partitions=partitions)
        alerts = f"{topic}-alerts"
        job = Job(spec=spec, input=KafkaInput(bootstrap=bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=bootstrap, alerts=alerts), shield=shield)
        execute(job, processes=processes)
        runs[name] = kafka_outputs(bootstrap, alerts, f"{topic}.shielded" if shield else None)
    return runs


def _shield_file(spec, tmp_path):
    job = Job(spec=spec, input=FileInput(path=str(tmp_path / "events.jsonl"), format="jsonl"), output=FileOutput(out_dir=str(tmp_path / "file-out")), shield=True)
    execute(job)
    return FileRun(tmp_path / "file-out")


@pytest.fixture(scope="module")
def compas_runs(kafka_bootstrap, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compas-matrix")
    return matrix(kafka_bootstrap, tmp, hard_compas_events(seed=1), compas_spec(tmp / "spec.yaml"))


@pytest.fixture(scope="module")
def shield_runs(kafka_bootstrap, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shield-matrix")
    return matrix(kafka_bootstrap, tmp, hard_hiring_decisions(seed=4), str(SPECS / "hiring_energy_shield.yaml"), fields=EventFields("id", "time"), shield=True)


def test_the_monitor_stream_has_every_kind_of_record(compas_runs):
    """The reference run is worth comparing: violations and recoveries, estimates into the sparse tail, dead letters of each reason."""
    file = compas_runs["file"]
    kinds = [alert["type"] for alert in file["alerts"]]
    assert kinds.count("fairness.violation") >= 2 and kinds.count("fairness.recovered") >= 2
    assert file["estimates"][-1]["event_time"] >= "2019-01-01"
    reasons = position_free(file["dead_letters"])
    assert {reason for reason, _, _ in reasons} == {"late", "unknown_kind", "wrong_type", "bad_time", "missing_field", "not_json"}
    assert sum(count for (reason, _, _), count in reasons.items() if reason == "late") >= 20


def test_every_estimate_day_is_evaluated_once(compas_runs):
    """No gap and no repeat: one estimate per day from the first to the last evaluation."""
    parse = time_parser("iso")
    days = [parse(record["event_time"]) // DAY for record in compas_runs["file"]["estimates"]]
    assert days == list(range(days[0], days[-1] + 1))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_layout_writes_what_the_file_path_writes(compas_runs, layout):
    expected, got = comparable(compas_runs["file"]), comparable(compas_runs[layout])
    for family in ("alerts", "estimates", "dead_letters"):
        assert len(got[family]) == len(expected[family]), f"{family}: {len(got[family])} records, the file path wrote {len(expected[family])}"
        assert got[family] == expected[family], family


def test_one_partition_writes_the_file_paths_dead_letters_with_the_same_ids(compas_runs):
    """On one partition the input positions agree too, so dead letters match field for field."""
    assert without_emitted_at(compas_runs["1 partition"]["dead_letters"]) == without_emitted_at(compas_runs["file"]["dead_letters"])


def test_shield_stream_flips_decisions(shield_runs):
    file = shield_runs["file"]
    assert len(file["shielded"]) == 3000 and sum(1 for r in file["alerts"] if r["type"] == "shield.intervention") > 100


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_layout_shields_as_the_file_path_does(shield_runs, layout):
    expected, got = comparable(shield_runs["file"]), comparable(shield_runs[layout])
    for family in ("alerts", "shielded", "dead_letters"):
        assert got[family] == expected[family], family


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_300k_defendants_on_2_and_4_partitions_match_the_file_path(kafka_bootstrap, tmp_path):
    """The measurement of the issue that found the evaluation gap: 300,000 COMPAS-shaped defendants (seed 2013, 250 a day)."""
    from fairstream.connectors.files import write_jsonl
    from fairstream.connectors.synthetic.compas_like import compas_like_events

    spec = str(SPECS / "compas_equalized_odds.yaml")
    path = tmp_path / "events.jsonl"
    write_jsonl(path, compas_like_events(300_000, seed=2013, per_day=250))
    expected = comparable(file_outputs(run_file(spec, path, tmp_path / "file-out", presorted=True)))
    assert len(expected["estimates"]) == 3536 and len(expected["alerts"]) == 2
    for partitions in (2, 4):
        topic = f"{tmp_path.name}-300k-{partitions}"
        replay(compas_like_events(300_000, seed=2013, per_day=250), kafka_bootstrap, topic, partitions=partitions)
        execute(Job(spec=spec, input=KafkaInput(bootstrap=kafka_bootstrap, topics=[topic], tail=False), output=KafkaOutput(bootstrap=kafka_bootstrap, alerts=f"{topic}-alerts")))
        got = comparable(kafka_outputs(kafka_bootstrap, f"{topic}-alerts"))
        assert got == expected, f"{partitions} partitions: {len(got['estimates'])} estimates, {len(got['alerts'])} alerts"
