"""Typed decoding gives what `RecordParser` gives: the same events (values of the same types) and the same dead letters
with the same reasons and details, over the hostile-input fuzz corpus, edge records of every field type, and schemas
with a composite key, one tagged kind, no kind field, or small length limits; schemas it cannot express use the parser.
The same holds for a block of lines decoded at once (`EventColumns`), and a block whose lines are all events is decoded
so."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairstream.compiler.load import parse_spec
from fairstream.reading.parse import RecordParser
from fairstream.reading.typed import EventColumns, TypedParser, expressible, record_parser
from fairstream.records.events import ENDED, IDLE, Event, LineBlock, RawRecord
from tests.helpers import spec_dict
from tests.test_hostile_input import JSON, records


def parsers(**input_changes: Any) -> tuple[TypedParser, RecordParser]:
    schema = parse_spec(spec_dict(input=input_changes)).input
    full = RecordParser(schema)
    typed = record_parser(schema, full, strings=False)
    assert isinstance(typed, TypedParser)
    return typed, full


def exact(batch: tuple[list[Any], list[Any], list[Any]]) -> list[str]:
    """Events, dead letters and markers spelled out with their types (1, 1.0 and True differ; `==` would not tell)."""
    return [repr(item) for part in batch for item in part]


def assert_same(typed: TypedParser, full: RecordParser, payloads: list[Any]) -> None:
    raws = [RawRecord(0, offset, payload) for offset, payload in enumerate(payloads)]
    expected = exact(full.parse_batch(raws))
    assert exact(typed.parse_batch(raws)) == expected
    lines = [payload for payload in payloads if type(payload) is bytes and b"\n" not in payload and not payload.endswith(b"\r")]
    if lines and len(lines) == len(payloads):  # as lines of a file: the same, decoded as a block
        assert exact(in_block(typed, lines)) == expected


def in_block(typed: TypedParser, lines: list[bytes], start: int = 0) -> tuple[list[Any], list[Any], list[Any]]:
    """What the parser makes of these lines as a block of a file, its events spelled out where it decoded them at once."""
    parsed, dead, markers = typed.parse_columns(LineBlock(0, start, b"".join(line + b"\n" for line in lines)))
    return (parsed.events() if isinstance(parsed, EventColumns) else parsed), dead, markers


@pytest.mark.parametrize("time_format", ["iso", "epoch_ms", "epoch_s"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_the_fuzz_corpus_gives_the_same_events_and_dead_letters(time_format, data):
    typed, full = parsers(time_format=time_format)
    assert_same(typed, full, data.draw(st.lists(records("epoch_ms" if time_format == "epoch_s" else time_format), min_size=40, max_size=80)))


def screen(**changes: Any) -> bytes:
    return orjson.dumps({"event": "SCREEN", "id": "x", "date": "2015-01-01T10:00:00Z", "race": "a", "score": 3, **changes}, option=orjson.OPT_NON_STR_KEYS)


EDGES = [
    screen(),
    screen(id=17),
    screen(id=-(2**63)),
    screen(id=2**63),
    screen(id=2**64 - 1),
    screen(id=True),
    screen(id=""),
    screen(id=None),
    screen(id=1.5),
    screen(id="é" * 256),
    screen(id="é" * 257),
    screen(race=""),
    screen(race="😀" * 256),
    screen(race="😀" * 257),
    screen(race=None),
    screen(race=["a"]),
    screen(score=True),
    screen(score=3.0),
    screen(score="3"),
    screen(score=2**63),
    screen(event="OTHER"),
    screen(event=""),
    screen(event=["SCREEN"]),
    screen(event=None),
    screen(date=""),
    screen(date="2015-01-01"),
    screen(date="2015-01-01T10:00:00+14:00"),
    screen(date="0001-01-01T00:00:00+14:00"),
    screen(date="9999-12-31T23:59:59-14:00"),
    screen(date="not a time"),
    screen(date=20150101),
    screen(extra={"nested": [1, 2.5, None]}),
    b'{"event":"SCREEN","id":"x","date":"2015-01-01","race":"a","score":3,"score":"high"}',
    b'{"event":"SCREEN","id":"x","date":"2015-01-01","race":"a","score":"high","score":3}',
    b'{"event":"SCREEN","id":"x","id":"y","date":"2015-01-01","race":"a","score":3}',
    b'{"event":"SCREEN","event":"RECIDIVISM","id":"x","date":"2015-01-01","race":"a","score":3}',
    b'{"event":"SCREEN","id":"x","date":"2015-01-01","race":"a","score":-9223372036854775809}',
    b'{"event":"SCREEN","id":-9223372036854775809,"date":"2015-01-01","race":"a","score":3}',
    b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01","v":1e400}',
    b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01","v":"\\ud800"}',
    b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01"} trailing',
    b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01"}   ',
    b'{"event":"RECIDIVISM","id":"x\xff","date":"2015-01-01"}',
    b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01",}',
    b"",
    b"   ",
    b"[1, 2]",
    b"null",
    b"\xff\xfe",
    '{"event":"RECIDIVISM","id":"x","date":"2015-01-01"}',
    {"event": "RECIDIVISM", "id": "x", "date": "2015-01-01"},
]


def test_edge_records_of_every_field_give_the_same_events_and_dead_letters():
    typed, full = parsers()
    assert_same(typed, full, EDGES)


def test_markers_pass_through_in_place():
    typed, full = parsers()
    raws = [RawRecord(0, 0, screen()), RawRecord(0, IDLE, b""), RawRecord(0, 1, b"bad"), RawRecord(0, ENDED, b"")]
    assert exact(typed.parse_batch(raws)) == exact(full.parse_batch(raws))


FLOATS_AND_BOOLS = {"kinds": {"SCREEN": {"race": "str", "score": "float", "hired": "bool"}, "RECIDIVISM": {}}}


@pytest.mark.parametrize(
    "schema, payloads",
    [
        (FLOATS_AND_BOOLS, [screen(score=value, hired=flag) for value in (3, 3.5, -0.0, 2**63, True, "3", None) for flag in (True, 1, "true")]),
        ({"key": ["id", "branch"]}, [screen(branch=branch) for branch in ("north", 7, "", True, None, 2.5)] + [screen(id=5, branch="n"), screen()]),
        ({"kinds": {"SCREEN": {"race": "str", "score": "int"}}}, [screen(), screen(event="RECIDIVISM"), b'{"id":"x","date":"2015-01-01","race":"a","score":3}']),
        ({"kind": None, "kinds": {"SCREEN": {"race": "str", "score": "int"}}}, [screen(), screen(event="anything"), screen(score="3")]),
        ({"max_key_chars": 3, "max_value_chars": 2}, [screen(id=123), screen(id=1234), screen(id="abcd"), screen(race="ab"), screen(race="abc")]),
        ({"time_format": "epoch_s", "kinds": {"SCREEN": {"race": "str", "score": "int"}}}, [screen(date=value) for value in (1e9, 10**9, "1e9", 1e300, "nan", True, "")]),
        ({"time_format": "%d/%m/%Y", "kinds": {"SCREEN": {"race": "str", "score": "int"}}}, [screen(date=value) for value in ("01/02/2015", "2015-02-01", 5)]),
    ],
    ids=["float and bool fields", "composite key", "one tagged kind", "no kind field", "small limits", "epoch seconds", "strptime pattern"],
)
def test_each_schema_shape_gives_the_same_events_and_dead_letters(schema, payloads):
    typed, full = parsers(**schema)
    assert_same(typed, full, payloads)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads=st.lists(st.fixed_dictionaries({}, optional={"event": st.sampled_from(["SCREEN", "RECIDIVISM"]) | JSON, "id": JSON, "branch": JSON, "date": JSON}), max_size=30))
def test_a_composite_key_of_any_parts_gives_the_same_events_and_dead_letters(payloads):
    typed, full = parsers(key=["id", "branch"])
    assert_same(typed, full, [orjson.dumps(payload) for payload in payloads])


@pytest.mark.parametrize(
    "schema",
    [
        {"time": "meta.time"},
        {"key": "person.id"},
        {"kinds": {"SCREEN": {"race": "str", "person.score": "int"}, "RECIDIVISM": {}}},
        {"kinds": {"SCREEN": {"race": "str", "id": "str"}, "RECIDIVISM": {}}},
        {"kinds": {"SCREEN": {"race": "str", "date": "str"}, "RECIDIVISM": {}}},
    ],
    ids=["nested time", "nested key", "nested field", "the key declared", "the time declared"],
)
def test_schemas_the_structs_cannot_express_are_parsed_by_the_record_parser(schema):
    parsed = parse_spec(spec_dict(input=schema)).input
    full = RecordParser(parsed)
    assert not expressible(parsed) and record_parser(parsed, full, strings=False) is full


def test_csv_rows_whose_text_is_converted_are_parsed_by_the_record_parser():
    parsed = parse_spec(spec_dict()).input
    full = RecordParser(parsed, strings=True)
    assert record_parser(parsed, full, strings=True) is full


def test_well_formed_records_are_decoded_without_the_record_parser():
    schema = parse_spec(spec_dict()).input
    full = RecordParser(schema)
    asked: list[RawRecord] = []
    full.parse = lambda raw: asked.append(raw) or RecordParser.parse(full, raw)  # type: ignore[method-assign]
    typed = record_parser(schema, full, strings=False)
    events, dead, _ = typed.parse_batch([RawRecord(0, offset, screen(id=str(offset))) for offset in range(50)] + [RawRecord(0, 50, b"bad")])
    assert len(events) == 50 and len(dead) == 1 and [raw.offset for raw in asked] == [50]


HUGE = re.compile(rb"[eE]\+?[0-9]{3}|[0-9]{288}")
"""Text like a number past a double: a block holding it is read line by line."""

WIDE = re.compile(rb"[0-9]{19}")
"""Integers that may lie past 64 bits, which the structs leave to the record parser: so is their block."""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_block_of_events_is_decoded_at_once_into_the_events_the_parser_gives(data):
    typed, full = parsers()
    candidates = data.draw(st.lists(records("iso"), min_size=40, max_size=120))
    lines = [
        line for line in candidates
        if b"\n" not in line and not line.endswith(b"\r") and not HUGE.search(line) and not WIDE.search(line) and type(full.parse(RawRecord(0, 0, line))) is Event
    ]  # fmt: skip
    if not lines:
        return
    raws = [RawRecord(0, 7 + offset, line) for offset, line in enumerate(lines)]
    parsed, dead, _markers = typed.parse_columns(LineBlock(0, 7, b"".join(line + b"\n" for line in lines)))
    assert isinstance(parsed, EventColumns) and not dead
    assert exact((parsed.events(), [], [])) == exact(full.parse_batch(raws))
    assert parsed.keys == [event.key for event in parsed.events()] and parsed.kinds == [event.kind for event in parsed.events()]


@pytest.mark.parametrize(
    "odd",
    [
        b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01","v":1e400}',
        b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01","v":1E+308}',
        b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01","v":' + b"9" * 400 + b"}",
        b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01","v":"\xff"}',
        b'{"event":"RECIDIVISM","id":"x","date":"2015-01-01","v":"\xc3\xa9"}',
        b"",
    ],
    ids=["huge exponent", "large exponent", "four hundred digits", "not UTF-8", "UTF-8", "blank line"],
)
def test_a_line_a_skipping_decoder_would_pass_sends_its_block_line_by_line(odd):
    """Numbers past a double, bytes that are not UTF-8 and blank lines in fields the structs skip: the record parser
    refuses what it refuses, so the block is parsed line by line and every line ends as the parser says."""
    typed, full = parsers()
    lines = [screen(id=str(index)) for index in range(20)]
    lines[9] = odd.replace(b"\\xff", b"\xff").replace(b"\\xc3\\xa9", "é".encode())
    raws = [RawRecord(0, offset, line) for offset, line in enumerate(lines)]
    assert exact(in_block(typed, lines)) == exact(full.parse_batch(raws))


def test_a_block_of_a_resumed_file_keeps_each_line_s_place():
    typed, _full = parsers()
    events, _dead, _markers = in_block(typed, [screen(id=str(index)) for index in range(3)], start=40)
    assert [event.origin.offset for event in events] == [40, 41, 42]


def test_a_topic_batch_is_a_block_unless_a_message_cannot_be_a_line():
    """Messages are lines of a block with their own offsets; a value holding a line ending, or none at all (a
    tombstone), keeps the batch as records."""
    typed, full = parsers()
    values = [screen(id=str(index)) for index in range(4)]
    block = LineBlock.of_records(2, [10, 11, 15, 16], values)
    assert block is not None and [(raw.partition, raw.offset, raw.payload) for raw in block] == [(2, 10, values[0]), (2, 11, values[1]), (2, 15, values[2]), (2, 16, values[3])]
    parsed = typed.parse_columns(block)[0]
    assert isinstance(parsed, EventColumns) and exact((parsed.events(), [], [])) == exact(full.parse_batch(list(block)))
    assert LineBlock.of_records(2, [10, 11], [values[0], b'{"event":\n"SCREEN"}']) is None
    assert LineBlock.of_records(2, [10, 11], [values[0], None]) is None  # type: ignore[list-item]
