"""Bad records among the real COMPAS events become dead letters with their reason and text; the run completes and its results do not change."""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.connectors.compas import compas_events
from fairstream.runner import run_file
from tests.helpers import dead_letter_shows, kept
from tests.test_compas_reference import without_emitted_at

SPEC = "compas_equalized_odds.yaml"
CSV_COLUMNS = ["event", "id", "date", "race", "sex", "age_cat", "decile_score"]
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}


@dataclass(frozen=True)
class Bad:
    """A record inserted at line/row `position` of the input, and the reason it must be dead-lettered for."""

    position: int
    reason: str
    payload: Any  # the line text (JSON lines) or the row of cells (CSV)


def screen(key: str | None, day: str, **changes: Any) -> dict[str, Any]:
    """A well-formed SCREEN event for a defendant not in the file; `changes` breaks it (None removes a field)."""
    event = {"event": "SCREEN", "id": key, "date": day, "race": "Caucasian", "sex": "Male", "age_cat": "25 - 45", "decile_score": 9}
    event.update(changes)
    return {k: v for k, v in event.items() if v is not None}


def year_before(day: str) -> str:
    return (date.fromisoformat(day) - timedelta(days=365)).isoformat()


def interleave(clean: list[Any], dates: list[str], makers: list[tuple[int, str, Any]]) -> tuple[list[Any], list[Bad]]:
    """Insert each maker's record so that it lands at its position; a maker gets the date of the clean record before it."""
    out = list(clean)
    bad = []
    for inserted, (position, reason, make) in enumerate(sorted(makers, key=lambda m: m[0])):
        payload = make(dates[position - inserted - 1] if position > inserted else dates[0])
        out.insert(position, payload)
        bad.append(Bad(position, reason, payload))
    return out, bad


def expected_counts(bad: list[Bad]) -> dict[str, int]:
    return dict(sorted(Counter(b.reason for b in bad).items()))


def summary_line(alerts: list[dict[str, Any]], counts: dict[str, int]) -> str:
    violations = sum(1 for a in alerts if a["type"] == "fairness.violation")
    reasons = ", ".join(f"{reason}: {n}" for reason, n in counts.items())
    return f"alerts: {violations} violation(s), {len(alerts) - violations} recovery(ies); dead letters: {sum(counts.values())} ({reasons})"


def run_cli(spec: Path, input_path: Path, fmt: str, out: Path):
    """Read as a stream (--sorted: not sorted first), so the record dated a year back is late, as on Kafka."""
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(input_path), "--format", fmt, "--out", str(out), "--sorted"], env=ENV)
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


@pytest.fixture(scope="module")
def events(compas_csv: Path) -> list[dict[str, Any]]:
    return compas_events(compas_csv)


# ------------------------------------------------------------------------ JSON lines


JSONL_BAD = [
    (0, "not_json", lambda day: '{"event": "SCREEN", "id": "900001", "date": '),
    (999, "not_object", lambda day: json.dumps(["SCREEN", "900002", day])),
    (1000, "missing_field", lambda day: json.dumps(screen(None, day))),
    (2500, "bad_time", lambda day: json.dumps(screen("900004", "not-a-date"))),
    (4000, "wrong_type", lambda day: json.dumps(screen("900005", day, decile_score="high"))),
    (5500, "unknown_kind", lambda day: json.dumps(screen("900006", day, event="APPEAL"))),
    (7000, "missing_field", lambda day: json.dumps(screen("900007", day, event=None))),
    (8500, "late", lambda day: json.dumps(screen("900008", year_before(day)))),
]


@pytest.fixture(scope="module")
def jsonl_case(events, specs_dir: Path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("jsonl")
    clean_lines = [json.dumps(event) for event in events]
    lines, bad = interleave(clean_lines, [event["date"] for event in events], JSONL_BAD)
    clean_path, bad_path = folder / "clean.jsonl", folder / "bad.jsonl"
    clean_path.write_text("\n".join(clean_lines) + "\n")
    bad_path.write_text("\n".join(lines) + "\n")
    clean = run_file(specs_dir / SPEC, clean_path, folder / "clean", fmt="jsonl")
    cli_result = run_cli(specs_dir / SPEC, bad_path, "jsonl", folder / "bad")
    return clean, cli_result, folder / "bad", bad


def read(folder: Path, name: str) -> list[dict[str, Any]]:
    path = folder / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_jsonl_bad_lines_become_one_dead_letter_each(jsonl_case):
    _clean, _result, out, bad = jsonl_case
    letters = read(out, "dead_letters.jsonl")

    assert dict(sorted(Counter(letter["reason"] for letter in letters).items())) == expected_counts(bad)
    assert all(letter["type"] == "pipeline.dead_letter" and letter["partition"] == 0 and letter["detail"] for letter in letters)
    on_time = sorted(
        ((letter["offset"], letter["reason"], kept(letter["record"])) for letter in letters if letter["reason"] != "late"), key=lambda item: item[0]
    )
    assert on_time == [(b.position, b.reason, dead_letter_shows(b.payload)) for b in bad if b.reason != "late"]
    [late] = [letter for letter in letters if letter["reason"] == "late"]
    [late_line] = [b.payload for b in bad if b.reason == "late"]
    assert kept(late["record"]) == dead_letter_shows(late_line)


def test_jsonl_summary_counts_dead_letters_by_reason(jsonl_case):
    clean, result, _out, bad = jsonl_case
    assert summary_line(clean.read("alerts.jsonl"), expected_counts(bad)) in result.stdout.splitlines()


@pytest.mark.parametrize("name", ["alerts.jsonl", "estimates.jsonl"])
def test_jsonl_results_equal_the_clean_run(jsonl_case, name):
    clean, _result, out, _bad = jsonl_case
    expected = without_emitted_at(clean.read(name))
    assert expected
    assert without_emitted_at(read(out, name)) == expected


def test_clean_jsonl_run_equals_the_compas_replay(jsonl_case, specs_dir: Path, compas_csv: Path, tmp_path):
    clean, *_ = jsonl_case
    replay = run_file(specs_dir / SPEC, compas_csv, tmp_path, fmt="compas")
    for name in ("alerts.jsonl", "estimates.jsonl"):
        assert without_emitted_at(replay.read(name)) == without_emitted_at(clean.read(name))
    assert clean.read("dead_letters.jsonl") == []


# ------------------------------------------------------------------------ CSV


def row(event: dict[str, Any]) -> dict[str, str]:
    return {column: str(event.get(column, "")) for column in CSV_COLUMNS}


CSV_BAD = [
    (0, "wrong_type", lambda day: row(screen("900011", day, decile_score="x"))),
    (1500, "bad_time", lambda day: row(screen("900012", "not-a-date"))),
    (3000, "missing_field", lambda day: row(screen("", day))),
    (4500, "unknown_kind", lambda day: row(screen("900014", day, event="APPEAL"))),
    (6000, "missing_field", lambda day: row(screen("900015", day, event=""))),
    (7500, "missing_field", lambda day: row(screen("900016", day, decile_score=""))),
    (9000, "late", lambda day: row(screen("900017", year_before(day)))),
]


def write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture(scope="module")
def csv_case(events, specs_dir: Path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("csv")
    clean_rows = [row(event) for event in events]
    rows, bad = interleave(clean_rows, [event["date"] for event in events], CSV_BAD)
    clean_path, bad_path = folder / "clean.csv", folder / "bad.csv"
    write_csv(clean_path, clean_rows)
    write_csv(bad_path, rows)
    clean = run_file(specs_dir / SPEC, clean_path, folder / "clean", fmt="csv")
    cli_result = run_cli(specs_dir / SPEC, bad_path, "csv", folder / "bad")
    return clean, cli_result, folder / "bad", bad


def test_csv_bad_rows_become_one_dead_letter_each(csv_case):
    _clean, _result, out, bad = csv_case
    letters = read(out, "dead_letters.jsonl")

    assert dict(sorted(Counter(letter["reason"] for letter in letters).items())) == expected_counts(bad)
    assert all(letter["type"] == "pipeline.dead_letter" and letter["partition"] == 0 and letter["detail"] for letter in letters)
    on_time = sorted(((letter["offset"], letter["reason"], kept(letter["record"])) for letter in letters if letter["reason"] != "late"), key=lambda item: item[0])
    assert on_time == [(b.position, b.reason, dead_letter_shows(b.payload)) for b in bad if b.reason != "late"]
    [late] = [letter for letter in letters if letter["reason"] == "late"]
    [late_row] = [b.payload for b in bad if b.reason == "late"]
    assert json.loads(late["record"])["id"] == late_row["id"]


def test_csv_summary_counts_dead_letters_by_reason(csv_case):
    clean, result, _out, bad = csv_case
    assert summary_line(clean.read("alerts.jsonl"), expected_counts(bad)) in result.stdout.splitlines()


@pytest.mark.parametrize("name", ["alerts.jsonl", "estimates.jsonl"])
def test_csv_results_equal_the_clean_run(csv_case, jsonl_case, name):
    clean, _result, out, _bad = csv_case
    expected = without_emitted_at(clean.read(name))
    assert expected
    assert without_emitted_at(read(out, name)) == expected
    assert expected == without_emitted_at(jsonl_case[0].read(name)), "CSV and JSON lines of the same events differ"


@pytest.mark.parametrize("case", ["jsonl_case", "csv_case"])
def test_late_dead_letter_keeps_the_original_record_and_its_offset(case, request):
    _clean, _result, out, bad = request.getfixturevalue(case)
    [late] = [letter for letter in read(out, "dead_letters.jsonl") if letter["reason"] == "late"]
    [record] = [b for b in bad if b.reason == "late"]
    assert (late["offset"], kept(late["record"])) == (record.position, dead_letter_shows(record.payload))
