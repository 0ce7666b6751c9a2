"""A file is read in event-time order: German credit with its dates cycling through January gives exactly the records of
the same file sorted by pandas, and read as it is (--sorted) it names the share it lost to lateness. A JSON-lines file
is read in blocks of lines, found in order without sorting, and resumed at the line it stopped at."""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fairstream.cli import cli
from fairstream.compiler.load import load_plan
from fairstream.connectors import files
from fairstream.connectors.event_order import UNREADABLE, blocks_in_order, time_ordered, time_reader
from fairstream.connectors.files import jsonl_blocks, jsonl_lines
from tests.helpers import german_decisions
from tests.test_compas_reference import without_emitted_at

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
SPEC = """\
monitor: german-parity
input: {time: date, time_format: "%Y-%m-%d", key: id, kinds: {DECISION: {sex: str, approved: bool}}}
trial: {close_on: [DECISION]}
variables:
  group: {first: DECISION, field: sex}
  approved: {first: DECISION, field: approved}
metric: {type: demographic_parity, group: group, prediction: approved, groups: [male, female], threshold: 0.1}
estimator: {prior: 0.5, confidence: 10}
evaluate: {every: 1d}
"""


@pytest.fixture(scope="module")
def german(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    """German credit as decisions dated 2024-01-01, 01-02, … 01-31, 01-01, … in file order; a spec for it."""
    folder = tmp_path_factory.mktemp("german")
    frame = german_decisions(lambda index: f"2024-01-{index % 31 + 1:02d}")
    frame.to_csv(folder / "unsorted.csv", index=False)
    frame.sort_values("date", kind="stable").to_csv(folder / "sorted.csv", index=False)
    (folder / "spec.yaml").write_text(SPEC)
    return folder, frame


def run(folder: Path, name: str, out: str, *extra: str):
    result = CliRunner().invoke(cli, ["run", str(folder / "spec.yaml"), "--input", str(folder / name), "--out", str(folder / out), *extra], env=ENV)
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_an_unsorted_file_gives_the_sorted_files_records(german):
    folder, frame = german
    unsorted, presorted = run(folder, "unsorted.csv", "a"), run(folder, "sorted.csv", "b", "--sorted")
    for name in ("alerts.jsonl", "estimates.jsonl"):
        assert without_emitted_at(read(folder / "a" / name)) == without_emitted_at(read(folder / "b" / name))
    assert not (folder / "a" / "dead_letters.jsonl").exists()
    assert "closed trials: 1000, incomplete: 0" in unsorted.stdout and "warning" not in unsorted.stderr
    assert unsorted.stdout.splitlines()[:8] == presorted.stdout.splitlines()[:8]
    final = read(folder / "a" / "estimates.jsonl")[-1]["parts"]["selection_rate"]["groups"]
    counts = frame.groupby("sex")["approved"].agg(["sum", "count"])
    assert {group: (cell["hits"], cell["trials"]) for group, cell in final.items()} == {
        group: (int(row["sum"]), int(row["count"])) for group, row in counts.iterrows()
    }


def test_a_file_read_as_sorted_names_its_late_share(german):
    folder, frame = german
    result = run(folder, "unsorted.csv", "c", "--sorted")
    times = pd.to_datetime(frame["date"])
    late = int((times < times.cummax().shift(fill_value=times.iloc[0])).sum())  # older than some earlier row: late at lateness 0
    letters = read(folder / "c" / "dead_letters.jsonl")
    assert len(letters) == late and {letter["reason"] for letter in letters} == {"late"}
    share = f"{late / len(frame):.1%} of its records ({late:,} of {len(frame):,})"
    lines = [line for line in result.stderr.splitlines() if share in line]
    assert len(lines) == 1 and lines[0].startswith("warning: input partition 0:") and "input.lateness" in lines[0]


def test_spilled_runs_merge_to_the_stable_sort():
    rng = random.Random(7)
    records = [{"t": rng.randrange(20), "n": index} for index in range(100)]
    records[13]["t"] = UNREADABLE
    ordered = list(time_ordered(lambda: records, lambda record: record["t"], max_in_memory=7)())
    expected = sorted(range(len(records)), key=lambda index: records[index]["t"])  # Python's sort is stable
    assert [index for index, _ in ordered] == expected and ordered[0][0] == 13
    assert [record for _, record in ordered] == [records[index] for index in expected]


@pytest.mark.parametrize("count", [7, 8, 14, 15, 49])
@pytest.mark.parametrize("shape", ["sorted", "shuffled", "sorted-runs"])
def test_every_chunk_shape_gives_the_stable_sort(count, shape):
    """Chunks of exactly `max_in_memory` records, files already in order and files sorted within each chunk only."""
    rng = random.Random(count)
    times = sorted(rng.randrange(10) for _ in range(count))
    if shape == "shuffled":
        rng.shuffle(times)
    elif shape == "sorted-runs":
        times = [time for start in range(0, count, 7) for time in sorted(times[start : start + 7], reverse=True)][::-1]
    records = [{"t": time, "n": index} for index, time in enumerate(times)]
    ordered = list(time_ordered(lambda: records, lambda record: record["t"], max_in_memory=7)())
    assert [index for index, _ in ordered] == sorted(range(count), key=lambda index: times[index])


def test_a_json_lines_time_is_read_from_its_field_alone():
    """The time of a JSON line is decoded without the rest of the line; a line without a readable time sorts first."""
    schema = load_plan("compas_equalized_odds").spec.input
    time_of = time_reader(schema)
    assert time_of(b'{"x": [1, {"y": 2}], "date": "2013-01-01T00:00:01Z"}') == 1_356_998_401_000
    assert time_of('{"date": "2013-01-01T00:00:01Z"}') == 1_356_998_401_000
    for unreadable in (b'{"x": 1}', b"[1]", b"not json", b'{"date": null}', b'{"date": "someday"}', b'{"date": 5'):
        assert time_of(unreadable) == UNREADABLE


LINE_SHAPES = [
    b'{"date": "2013-01-01T00:00:0%dZ", "id": "a"}',
    b'{"date": "2013-01-01T00:00:0%dZ"}\r',
    b"",
    b"not json %d",
    b'{"date": "someday %d"}',
]


@settings(max_examples=150, deadline=None)
@given(
    shapes=st.lists(st.tuples(st.integers(0, len(LINE_SHAPES) - 1), st.integers(0, 9)), max_size=25),
    chunk=st.integers(1, 64),
    ending=st.booleans(),
    held=st.integers(0, 400),
)
def test_a_file_is_in_event_order_exactly_when_sorting_would_keep_it(tmp_path_factory, shapes, chunk, ending, held):
    """Read in blocks of whole lines (of any size), a JSON-lines file is found in order exactly when the stable sort of
    its lines by time (unreadable first) leaves every line in place; its blocks, partly held from the check with their
    times, are then read as they are in the file."""
    lines = [LINE_SHAPES[shape].replace(b"%d", str(second).encode()) for shape, second in shapes]
    path = tmp_path_factory.mktemp("order") / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if ending else b""))
    schema = load_plan("compas_equalized_odds").spec.input
    as_lines = list(jsonl_lines(path)())
    kept = [index for index, _ in time_ordered(jsonl_lines(path), time_reader(schema))()] == list(range(len(as_lines)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files, "_CHUNK", chunk)
        blocks = blocks_in_order(path, schema, max_held=held)
        assert (blocks is not None) == kept
        if blocks is not None:  # the first read and a later one both give the file's lines, in whole-line blocks
            first, later = list(blocks()), list(blocks())
            assert b"".join(text for text, _ in first) == b"".join(text for text, _ in later) == b"".join(jsonl_blocks(path)())
            for text, times in first:
                assert times is None or times == [time_reader(schema)(line) for line in text.split(b"\n")[:-1]]


@settings(max_examples=100, deadline=None)
@given(count=st.integers(0, 40), chunk=st.integers(1, 80), start=st.integers(0, 45), crlf=st.booleans())
def test_a_file_read_in_blocks_gives_its_lines_from_where_a_resume_starts(tmp_path_factory, count, chunk, start, crlf):
    """Blocks of any size give the lines `jsonl_lines` gives, each at its place in the file, from the resumed position on."""
    path = tmp_path_factory.mktemp("blocks") / "events.jsonl"
    path.write_bytes(b"".join(b'{"n": %d}' % index + (b"\r\n" if crlf else b"\n") for index in range(count))[: -1 if count and crlf else None])
    lines = list(jsonl_lines(path)())
    read: list = []
    with pytest.MonkeyPatch.context() as patch, contextlib.suppress(StopIteration):
        patch.setattr(files, "_CHUNK", chunk)
        part = files.RecordSource(jsonl_blocks(path), blocks=True).build_part("read", "0-events.jsonl", start)
        while True:
            read.extend(part.next_batch())
    assert [(raw.offset, raw.payload) for raw in read] == list(enumerate(lines))[start:]
    assert part.snapshot() == len(lines)
