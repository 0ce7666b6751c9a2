"""Any arrival order within `input.lateness` gives the records of the time-ordered stream, on one file and on two
files split by key: an outcome that arrives before its trial's opening event still joins its trial."""

from __future__ import annotations

import pytest

from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.split import split_records
from fairstream.runner import FileInput, FileOutput, FileRun, Job, execute
from tests.helpers import under_any_spec
from tests.kafka.outputs import file_outputs, without_emitted_at
from tests.lateness_orders import event_time, spec_with_lateness, time_ordered, within_lateness


def monitored(spec, paths, out) -> dict[str, list]:
    execute(Job(spec=str(spec), input=FileInput(path=[str(path) for path in paths], format="jsonl"), output=FileOutput(out_dir=str(out))))
    return {family: without_emitted_at(records) for family, records in file_outputs(FileRun(out)).items()}


@pytest.fixture(scope="module")
def spec(specs_dir, tmp_path_factory):
    return spec_with_lateness(specs_dir, tmp_path_factory.mktemp("spec"))


@pytest.fixture(scope="module")
def events(compas_csv):
    return compas_events(compas_csv)


@pytest.fixture(scope="module")
def in_order(spec, events, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ordered")
    write_jsonl(folder / "events.jsonl", time_ordered(events))
    return monitored(spec, [folder / "events.jsonl"], folder / "out")


def test_the_orders_reach_back_across_days_and_put_outcomes_before_their_screening(events):
    shuffled = within_lateness(events, seed=0)
    backwards = sum(1 for before, after in zip(shuffled, shuffled[1:]) if event_time(after) < event_time(before))
    assert backwards > 1000
    seen, early_outcomes = set(), 0
    for event in shuffled:
        if event["event"] == "RECIDIVISM" and event["id"] not in seen:
            early_outcomes += 1
        if event["event"] == "SCREEN":
            seen.add(event["id"])
    assert early_outcomes >= 5  # RECIDIVISM within three days of the screening: a handful


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_file_in_any_order_within_the_lateness_writes_what_the_ordered_stream_writes(spec, events, in_order, tmp_path, seed):
    assert in_order["estimates"] and in_order["alerts"] and not in_order["dead_letters"]
    write_jsonl(tmp_path / "events.jsonl", within_lateness(events, seed))
    assert monitored(spec, [tmp_path / "events.jsonl"], tmp_path / "out") == in_order


def test_two_files_split_by_key_in_any_order_within_the_lateness_write_what_the_ordered_stream_writes(spec, events, in_order, tmp_path):
    parts = [path for path, _ in split_records(within_lateness(events, seed=3), lambda event: event.get("id"), tmp_path / "parts", 2)]
    assert monitored(spec, parts, tmp_path / "out") == in_order


def test_input_that_is_not_keyed_buffers_the_same_way_before_its_trial_buckets(spec, events, in_order, tmp_path):
    import yaml

    unkeyed = yaml.safe_load(spec.read_text())
    unkeyed["input"]["keyed"] = False
    (tmp_path / "unkeyed.yaml").write_text(yaml.safe_dump(unkeyed, sort_keys=False))
    parts = [path for path, _ in split_records(within_lateness(events, seed=4), lambda event: event.get("id"), tmp_path / "parts", 2)]
    unkeyed = monitored(tmp_path / "unkeyed.yaml", parts, tmp_path / "out")
    assert {family: under_any_spec(records) for family, records in unkeyed.items()} == {family: under_any_spec(records) for family, records in in_order.items()}
