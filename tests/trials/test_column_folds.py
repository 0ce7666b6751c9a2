"""Events decoded a block at a time and folded from their structs (`EventColumns`) give the records that events folded
one by one give: trials packed in the native table or kept in a dict, closed by time or by an event, opened on a
condition, windows of `exists`, keys written as numbers as well as text, the memos of openers and observers both
filled and met."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest

from fairstream.compiler.load import load_plan
from fairstream.connectors.files import RecordSource, jsonl_blocks, jsonl_lines
from fairstream.connectors.synthetic.compas_like import compas_like_events
from fairstream.connectors.synthetic.seminar import seminar_events
from fairstream.dataflow.flow import build_flow
from fairstream.engine.api import run_main
from fairstream.lab.bench.database import ALGORITHM
from fairstream.reading.typed import EventColumns
from fairstream.records.events import LineBlock
from tests.list_sink import ListSink
from tests.test_compas_reference import without_emitted_at


def compas_lines() -> list[bytes]:
    """COMPAS-shaped events, every third defendant's id written as a number."""
    events = itertools.islice(compas_like_events(30_000, seed=5, per_day=250.0), 30_000)
    return [orjson.dumps({**event, "id": int(event["id"])} if int(event["id"]) % 3 == 0 else event) for event in events]


def seminar_lines() -> list[bytes]:
    return [orjson.dumps(event) for event in seminar_events(ALGORITHM, 3, 3_000)]


CASES = {
    "packed trials": ("compas_equalized_odds", compas_lines),
    "trials opened on a condition": ("rtlola_compas_equalized_odds", compas_lines),
    "trials closed by an event": ("seminar_demographic_parity", seminar_lines),
}


def records(spec: str, source: RecordSource) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    run_main(build_flow(load_plan(spec), source, ListSink(out)))
    return without_emitted_at(out)


@pytest.mark.parametrize("case", CASES)
def test_folding_a_block_s_structs_gives_the_records_of_folding_its_events(case, tmp_path):
    spec, lines = CASES[case]
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines()))
    first = next(iter(jsonl_blocks(path)()))
    assert isinstance(load_plan(spec).parser(strings=False).parse_columns(LineBlock(0, 0, first))[0], EventColumns)
    by_columns = records(spec, RecordSource(jsonl_blocks(path), blocks=True))
    assert by_columns == records(spec, RecordSource(jsonl_lines(path)))
    assert sum(record["type"] == "fairness.estimate" for record in by_columns) > 50
