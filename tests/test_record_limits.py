"""A record is bounded and every way it can be wrong has a name: over `input.max_record_bytes` it is a dead letter
(`record_too_large`), a NaN or an Infinity is `not_finite` naming its field, a declared field that is there but null is
`null_field`; through each parser (record by record, typed, by blocks of lines) and through a shield run, whose
decisions would otherwise carry a 20 MB field back out whole."""

from __future__ import annotations

import json
import subprocess
import sys

import orjson
import pytest

from fairstream.compiler.load import parse_spec
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.reading.parse import RecordParser
from fairstream.reading.typed import record_parser
from fairstream.records.events import DeadLetter, Event, RawRecord
from tests.conftest import SPECS
from tests.helpers import spec_dict

SCREEN = {"event": "SCREEN", "id": "x", "date": "2015-01-01", "race": "a", "score": 3}


def parsers(**input_changes):
    schema = parse_spec(spec_dict(input=input_changes)).input
    fallback = RecordParser(schema)
    return {"record": fallback, "typed": record_parser(schema, fallback, strings=False)}


@pytest.mark.parametrize("which", ["record", "typed"])
def test_a_record_over_the_limit_is_a_dead_letter_with_its_size(which):
    parser = parsers(max_record_bytes=1000)[which]
    assert isinstance(parser.parse(RawRecord(0, 1, orjson.dumps({**SCREEN, "note": "n" * 900}))), Event)
    payload = orjson.dumps({**SCREEN, "note": "n" * 1000})
    letter = parser.parse(RawRecord(0, 2, payload))
    assert isinstance(letter, DeadLetter) and letter.reason == "record_too_large"
    assert letter.detail == f"the record has {len(payload):,} bytes; at most input.max_record_bytes = 1,000"


def test_a_csv_row_over_the_limit_is_a_dead_letter():
    parser = RecordParser(parse_spec(spec_dict(input={"max_record_bytes": 100})).input, strings=True)
    row = {key: str(value) for key, value in SCREEN.items()}
    assert isinstance(parser.parse(RawRecord(0, 1, row)), Event)
    assert parser.parse(RawRecord(0, 2, {**row, "note": "n" * 100})).reason == "record_too_large"


@pytest.mark.parametrize(("text", "field", "value"), [
    ('"score": NaN', "score", "nan"), ('"score": Infinity', "score", "inf"), ('"score": -Infinity', "score", "-inf"),
    ('"score": 3, "extra": {"inner": [1, NaN]}', "extra.inner.1", "nan"),
])  # fmt: skip
@pytest.mark.parametrize("which", ["record", "typed"])
def test_nan_and_infinity_are_not_finite_naming_the_field(which, text, field, value):
    payload = b'{"event": "SCREEN", "id": "x", "date": "2015-01-01", "race": "a", ' + text.encode() + b"}"
    letter = parsers()[which].parse(RawRecord(0, 1, payload))
    assert isinstance(letter, DeadLetter) and letter.reason == "not_finite"
    assert letter.detail == f"field {field!r} is {value}: JSON has no NaN or Infinity (write null, or leave the field out)"


def test_text_that_only_mentions_nan_is_still_not_json():
    letter = parsers()["record"].parse(RawRecord(0, 1, b'{"race": "NaN", '))
    assert letter.reason == "not_json"


@pytest.mark.parametrize(("field", "what"), [("race", "field"), ("id", "dependence key"), ("date", "event time"), ("event", "event kind")])
@pytest.mark.parametrize("which", ["record", "typed"])
def test_a_declared_field_that_is_null_is_a_null_field(which, field, what):
    letter = parsers()[which].parse(RawRecord(0, 1, orjson.dumps({**SCREEN, field: None})))
    assert isinstance(letter, DeadLetter) and letter.reason == "null_field"
    assert letter.detail == f"{what} {field!r} is null; it needs a value"
    absent = parsers()[which].parse(RawRecord(0, 1, orjson.dumps({name: value for name, value in SCREEN.items() if name != field})))
    assert absent.reason == "missing_field"


def test_a_shield_dead_letters_a_decision_with_a_20_mb_field_and_answers_the_rest(tmp_path):
    decisions = hiring_decisions(50, p_male=0.5, p_female=0.2, seed=3)
    decisions[20]["attachment"] = "x" * 20_000_000
    decisions[30]["hired"] = float("nan")
    decisions[40]["gender"] = None
    (tmp_path / "decisions.jsonl").write_text("".join(json.dumps(d) + "\n" for d in decisions))
    command = [sys.executable, "-m", "fairstream.cli", "shield", "run", str(SPECS / "hiring_energy_shield.yaml"), "--input", str(tmp_path / "decisions.jsonl"), "--out", str(tmp_path / "out")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    letters = [json.loads(line) for line in (tmp_path / "out" / "dead_letters.jsonl").read_text().splitlines()]
    assert [(letter["offset"], letter["reason"]) for letter in letters] == [(20, "record_too_large"), (30, "not_finite"), (40, "null_field")]
    assert all(len(letter["record"]) < 2200 for letter in letters)  # the letter keeps an excerpt and the hash
    shielded = (tmp_path / "out" / "decisions_shielded.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in shielded) == sorted(d["id"] for i, d in enumerate(decisions) if i not in (20, 30, 40))
    assert max(map(len, shielded)) < 5_000
