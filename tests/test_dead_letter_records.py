"""What a dead letter keeps of its record: a bounded excerpt by default, configured fields redacted, or only a hash."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from fairstream.compiler.load import parse_spec
from fairstream.compiler.plan import build_plan
from fairstream.reading.parse import RecordParser
from fairstream.records.events import DeadLetter, RawRecord
from fairstream.records.redact import REDACTED, LetterRecord
from tests.helpers import spec_dict

PERSON = {"event": "SCREEN", "id": "17", "date": "2015-01-01", "race": "Other", "score": "high", "sex": "Female", "age": 23}


def test_an_excerpt_is_cut_and_says_how_long_the_record_was_and_its_hash():
    keep = LetterRecord(max_chars=10)
    digest = hashlib.sha256(b'"' * 700_000).hexdigest()
    assert keep(b'"' * 700_000) == f'""""""""""… (700,000 characters in all, sha256:{digest})'
    assert keep(b"short") == "short"


@pytest.mark.parametrize("payload", [b'"' * 700_000, b"\xff" * 700_000, orjson.dumps({"id": "1", "blob": "x" * 700_000})])
def test_a_huge_record_leaves_a_dead_letter_of_a_few_kilobytes(payload):
    letter = RecordParser(parse_spec(spec_dict()).input).parse(RawRecord(0, 0, payload))
    assert isinstance(letter, DeadLetter)
    assert len(orjson.dumps(letter.to_json())) < 8_000


def test_redacted_fields_keep_their_names_and_lose_their_values():
    keep = LetterRecord(redact=("race", "sex", "age"))
    shown = orjson.loads(keep(orjson.dumps(PERSON)))
    assert shown == {**PERSON, "race": REDACTED, "sex": REDACTED, "age": REDACTED}


def test_a_record_that_cannot_show_its_fields_is_hashed_when_fields_are_redacted():
    raw = b'{"race": "Other", "sex": "Fem'
    assert LetterRecord(redact=("race",))(raw) == f"sha256:{hashlib.sha256(raw).hexdigest()}"


def test_keep_hash_shows_only_the_records_hash():
    raw = orjson.dumps(PERSON)
    assert LetterRecord(keep="hash")(raw) == f"sha256:{hashlib.sha256(raw).hexdigest()}"


def test_the_specs_dead_letters_section_reaches_parser_and_clock():
    plan = build_plan(parse_spec(spec_dict(dead_letters={"redact": ["race"], "max_chars": 500})))
    letter = plan.parser().parse(RawRecord(0, 3, orjson.dumps(PERSON)))
    assert letter.reason == "wrong_type" and orjson.loads(letter.record)["race"] == REDACTED
    assert plan.letter_record == LetterRecord(max_chars=500, redact=("race",))


def test_a_late_event_is_dead_lettered_with_the_same_redaction():
    from fairstream.trials.clock import PartitionClock

    plan = build_plan(parse_spec(spec_dict(dead_letters={"redact": ["race"]})))
    parse = plan.parser().parse
    first = parse(RawRecord(0, 0, orjson.dumps({**PERSON, "score": 3, "date": "2015-02-01"})))
    older = parse(RawRecord(0, 1, orjson.dumps({**PERSON, "id": "18", "score": 3})))
    clock = PartitionClock(0, 0, letter_record=plan.letter_record)
    clock.admit([first])
    _, (letter,) = clock.admit([older])
    assert letter.reason == "late" and orjson.loads(letter.record)["race"] == REDACTED


def test_dead_letters_redact_the_fields_that_define_groups_by_default_and_keep_them_on_request(specs_dir, tmp_path):
    """The hiring spec has no dead_letters section: gender, the field its group variable reads, is redacted; an explicit
    `redact: []` keeps every field; a record that is not a JSON object cannot show fields and is only hashed."""
    from fairstream.compiler.load import load_plans

    record = {"id": "a-1", "time": "2024-01-01T00:00:00Z", "event": "DECISION", "gender": "female", "hired": True}
    (default,) = load_plans([str(specs_dir / "hiring_demographic_parity.yaml")])
    assert orjson.loads(default.letter_record(orjson.dumps(record))) == {**record, "gender": "<redacted>"}
    assert default.letter_record(b"gender=female") == f"sha256:{hashlib.sha256(b'gender=female').hexdigest()}"
    (tmp_path / "keep.yaml").write_text((specs_dir / "hiring_demographic_parity.yaml").read_text() + "dead_letters:\n  redact: []\n")
    (kept,) = load_plans([str(tmp_path / "keep.yaml")])
    assert orjson.loads(kept.letter_record(orjson.dumps(record))) == record
