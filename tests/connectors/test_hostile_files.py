"""Hostile input files: a stray quote, a byte that is not UTF-8, an encoding mark, an overlong field or a row with one
field too many costs that row alone, as a dead letter with its reason; every other row gives exactly what the file
without the bad row gives. `fairstream split` splits JSON lines and keeps every line, bad ones included."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl
from fairstream.records.csvrows import CsvTable
from fairstream.records.events import Unreadable
from tests.helpers import german_decisions
from tests.test_compas_reference import without_emitted_at
from tests.test_file_order import SPEC as GERMAN_SPEC

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
COMPAS_COLUMNS = ["event", "id", "date", "decile_score", "race", "sex", "age_cat"]


def run(spec: Path, data: Path, out: Path, *extra: str):
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(data), "--out", str(out), *extra], env=ENV)
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def changed(lines: list[bytes], index: int, line: bytes) -> bytes:
    return b"".join([*lines[:index], line, *lines[index + 1 :]])


def without(lines: list[bytes], index: int) -> bytes:
    return b"".join([*lines[:index], *lines[index + 1 :]])


@pytest.fixture(scope="module")
def german(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("german")
    german_decisions(lambda index: f"2024-01-{index // 40 + 1:02d}").to_csv(folder / "clean.csv", index=False)
    (folder / "spec.yaml").write_text(GERMAN_SPEC)  # the German credit decisions, demographic parity by sex
    return folder


@pytest.fixture(scope="module")
def compas_events_csv(tmp_path_factory, compas_csv) -> Path:
    """The 10,685 COMPAS events as a CSV (written by Python's csv module)."""
    path = tmp_path_factory.mktemp("compas") / "events.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, COMPAS_COLUMNS)
        writer.writeheader()
        writer.writerows(compas_events(compas_csv))
    return path


def assert_costs_one_row(spec: Path, folder: Path, bad: bytes, reference: bytes, reason: str, line: int, *extra: str) -> dict:
    """The file with a bad row gives one dead letter (`reason`, naming `line`) and the alerts of the file without it."""
    (folder / "bad.csv").write_bytes(bad)
    (folder / "reference.csv").write_bytes(reference)
    result = run(spec, folder / "bad.csv", folder / "bad", *extra)
    run(spec, folder / "reference.csv", folder / "reference", *extra)
    letters = read(folder / "bad" / "dead_letters.jsonl")
    assert [letter["reason"] for letter in letters] == [reason]
    assert letters[0]["detail"].startswith(f"line {line:,}")
    assert f"dead letters: 1 ({reason}: 1)" in result.stdout
    for name in ("alerts.jsonl", "estimates.jsonl"):
        assert without_emitted_at(read(folder / "bad" / name)) == without_emitted_at(read(folder / "reference" / name))
    assert read(folder / "bad" / "estimates.jsonl")
    return letters[0]


def test_a_stray_quote_in_the_compas_events_costs_its_row_alone(compas_events_csv, specs_dir, tmp_path):
    lines = lines_of(compas_events_csv)
    fields = lines[3000].split(b",")
    stray = b",".join([*fields[:4], b'"' + fields[4], *fields[5:]])
    assert b'"' not in b"".join(lines)  # the quote opened is never closed: before, the field ran to the end of the file
    letter = assert_costs_one_row(specs_dir / "compas_equalized_odds.yaml", tmp_path, changed(lines, 3000, stray), without(lines, 3000), "not_csv", 3001)
    assert "reading goes on at line 3,002" in letter["detail"]


def test_a_stray_quote_in_a_small_file_costs_its_row_alone(german, tmp_path):
    lines = lines_of(german / "clean.csv")
    letter = assert_costs_one_row(german / "spec.yaml", tmp_path, changed(lines, 10, lines[10].replace(b",", b',"', 1)), without(lines, 10), "not_csv", 11)
    assert "not closed" in letter["detail"]


def test_a_stray_quote_in_the_propublica_file_costs_its_row_alone(compas_csv, specs_dir, tmp_path):
    lines = lines_of(compas_csv)
    fields = lines[500].split(b",")
    stray = b",".join([fields[0], b'"' + fields[1], *fields[2:]])
    (tmp_path / "compas-scores-bad.csv").write_bytes(changed(lines, 500, stray))
    (tmp_path / "compas-scores-reference.csv").write_bytes(without(lines, 500))
    spec = specs_dir / "compas_equalized_odds.yaml"
    result = run(spec, tmp_path / "compas-scores-bad.csv", tmp_path / "bad")
    run(spec, tmp_path / "compas-scores-reference.csv", tmp_path / "reference")
    assert [letter["reason"] for letter in read(tmp_path / "bad" / "dead_letters.jsonl")] == ["not_csv"]
    assert "dead letters: 1 (not_csv: 1)" in result.stdout
    assert without_emitted_at(read(tmp_path / "bad" / "alerts.jsonl")) == without_emitted_at(read(tmp_path / "reference" / "alerts.jsonl"))


def test_a_byte_that_is_not_utf8_costs_its_row_alone(german, tmp_path):
    lines = lines_of(german / "clean.csv")
    letter = assert_costs_one_row(german / "spec.yaml", tmp_path, changed(lines, 40, lines[40].replace(b"male", b"m\xe4le", 1)), without(lines, 40), "bad_encoding", 41)
    assert "(b'\\xe4') is not UTF-8" in letter["detail"]


def test_a_field_past_the_csv_limit_costs_its_row_alone(german, tmp_path):
    lines = lines_of(german / "clean.csv")
    key = lines[70].split(b",", 1)
    assert_costs_one_row(german / "spec.yaml", tmp_path, changed(lines, 70, b"x" * (1 << 20) + b"," + key[1]), without(lines, 70), "value_too_long", 71)


def test_a_fifty_megabyte_quoted_field_costs_its_row_alone(german, tmp_path):
    lines = lines_of(german / "clean.csv")
    fields = lines[90].split(b",")
    huge = b'"' + b"a, b " * (10 << 20) + b'"'
    letter = assert_costs_one_row(german / "spec.yaml", tmp_path, changed(lines, 90, b",".join([*fields[:2], huge, *fields[3:]])), without(lines, 90), "value_too_long", 91)
    assert len(letter["record"]) < 3000


def test_a_row_with_a_field_too_many_never_shifts_into_the_wrong_columns(german, tmp_path):
    lines = lines_of(german / "clean.csv")
    assert_costs_one_row(german / "spec.yaml", tmp_path, changed(lines, 5, lines[5].replace(b",", b",extra,", 1)), without(lines, 5), "not_csv", 6)


def test_an_encoding_mark_before_the_header_is_read_as_one(german, tmp_path):
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + (german / "clean.csv").read_bytes())
    result = run(german / "spec.yaml", tmp_path / "bom.csv", tmp_path / "bom")
    run(german / "spec.yaml", german / "clean.csv", tmp_path / "clean")
    assert "dead letters: 0" in result.stdout and "closed trials: 1000," in result.stdout
    assert without_emitted_at(read(tmp_path / "bom" / "alerts.jsonl")) == without_emitted_at(read(tmp_path / "clean" / "alerts.jsonl"))


def test_an_unreadable_header_ends_the_run_in_one_line(german, tmp_path):
    (tmp_path / "header.csv").write_bytes(b'id,"date\n' + b"".join(lines_of(german / "clean.csv")[1:]))
    result = CliRunner().invoke(cli, ["run", str(german / "spec.yaml"), "--input", str(tmp_path / "header.csv"), "--out", str(tmp_path / "out")], env=ENV)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "header.csv: the header line cannot be read: line 1: a quote opened on this line is not closed" in result.stderr


def test_good_rows_read_as_pythons_csv_reads_them():
    text = 'id,note,n\r\n1,"a, b",2\n\n2,"say ""hi""",3\n3,"two\nlines",4\n4,plain,5\n'
    reference = list(csv.DictReader(io.StringIO(text, newline="")))
    assert list(CsvTable(io.BytesIO(text.encode()))) == reference


def test_bad_rows_are_named_and_reading_goes_on_at_the_next_line():
    text = b'id,note\n1,"open\n2,ok\n3,"x"y\n4,a,b\n5,\xff\n6,fine\n'
    rows = list(CsvTable(io.BytesIO(text)))
    assert [row.reason if isinstance(row, Unreadable) else row["id"] for row in rows] == ["not_csv", "2", "not_csv", "not_csv", "bad_encoding", "6"]
    assert [row.text for row in rows if isinstance(row, Unreadable)] == [b'1,"open\n', b'3,"x"y\n', b"4,a,b\n", b"5,\xff\n"]


@pytest.fixture(scope="module")
def compas_jsonl(tmp_path_factory, compas_csv) -> Path:
    """The COMPAS events as JSON lines, with a line that is no JSON and an event without its key."""
    path = tmp_path_factory.mktemp("lines") / "events.jsonl"
    write_jsonl(path, compas_events(compas_csv))
    with path.open("ab") as handle:
        handle.write(b'not json\n{"event": "SCREEN", "date": "2014-01-01"}\n')
    return path


def test_a_json_lines_file_is_split_by_key_keeping_every_line(compas_jsonl, specs_dir, tmp_path):
    spec = specs_dir / "compas_equalized_odds.yaml"
    result = CliRunner().invoke(cli, ["split", str(spec), "--input", str(compas_jsonl), "--partitions", "3", "--out", str(tmp_path / "parts")], env=ENV)
    assert result.exit_code == 0, result.output + repr(result.exception)
    parts = sorted((tmp_path / "parts").glob("part-*.jsonl"))
    assert len(parts) == 3
    assert Counter(line for part in parts for line in lines_of(part)) == Counter(lines_of(compas_jsonl))
    keys = [{json.loads(line)["id"] for line in lines_of(part) if line.startswith(b"{") and b'"id"' in line} for part in parts]
    assert all(keys) and not keys[0] & keys[1] and not keys[0] & keys[2] and not keys[1] & keys[2]
    assert b"not json\n" in lines_of(parts[0])
    run(spec, tmp_path / "parts" / "part-*.jsonl", tmp_path / "parted")
    run(spec, compas_jsonl, tmp_path / "whole")
    assert without_emitted_at(read(tmp_path / "parted" / "alerts.jsonl")) == without_emitted_at(read(tmp_path / "whole" / "alerts.jsonl"))
    assert Counter(letter["reason"] for letter in read(tmp_path / "parted" / "dead_letters.jsonl")) == {"not_json": 1, "missing_field": 1}
