"""A mass rejection names its cause where it is reported: the leading reasons with an example each and the spec field
that fixes them; following the advice given (a time format, a column's spelling) makes the same file run clean."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.records.hints import TIME_FORMATS, time_format_of
from fairstream.records.timefmt import time_parser
from tests.helpers import german_decisions

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
SPEC = """\
monitor: german
input: {{time: date, time_format: "{time_format}", key: id, kinds: {{DECISION: {{{column}: str, approved: bool}}}}}}
trial: {{close_on: [DECISION]}}
variables:
  group: {{first: DECISION, field: {column}}}
  approved: {{first: DECISION, field: approved}}
metric: {{type: demographic_parity, group: group, prediction: approved, groups: all, threshold: 0.1}}
"""


@pytest.fixture(scope="module")
def german(tmp_path_factory) -> Path:
    """German credit dated in US style (month/day/year), and a copy with every other row in ISO style."""
    folder = tmp_path_factory.mktemp("german")
    frame = german_decisions(lambda index: (date(2024, 1, 1) + timedelta(days=index // 10)).strftime("%m/%d/%Y"))
    frame.to_csv(folder / "us.csv", index=False)
    iso = german_decisions(lambda index: (date(2024, 1, 1) + timedelta(days=index // 10)).isoformat())
    frame.assign(date=[iso.date[index] if index % 2 else us for index, us in enumerate(frame.date)]).to_csv(folder / "mixed.csv", index=False)
    return folder


def run(folder: Path, data: str, time_format: str = "%Y-%m-%d", column: str = "sex"):
    spec = folder / "spec.yaml"
    spec.write_text(SPEC.format(time_format=time_format, column=column))
    return CliRunner().invoke(cli, ["run", str(spec), "--input", str(folder / data), "--out", str(folder / "out")], env=ENV)


def test_a_us_date_format_is_named_and_the_named_format_reads_the_file(german):
    failed = run(german, "us.csv")
    assert failed.exit_code == 1 and failed.stderr.count("\n") == 1
    assert "(bad_time: 1,000); the first bad_time: cannot read event time '01/01/2024'" in failed.stderr
    assert "input.time_format: '%m/%d/%Y' reads it (spec: input.time_format)" in failed.stderr
    fixed = run(german, "us.csv", time_format="%m/%d/%Y")
    assert fixed.exit_code == 0 and "dead letters: 0" in fixed.stdout and "closed trials: 1000," in fixed.stdout


def test_a_misspelt_column_is_named_with_the_records_near_field(german):
    failed = run(german, "us.csv", time_format="%m/%d/%Y", column="Sex")
    assert failed.exit_code == 1
    assert "the first missing_field: DECISION events need field 'Sex'; the record has 'sex' (spec: input.time" in failed.stderr


def test_a_partial_rejection_prints_its_leading_reason(german):
    result = run(german, "mixed.csv")
    assert result.exit_code == 0
    bad = 500  # the rows in US style: every even row of 1,000
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning: dead letters bad_time:")]
    assert warned == [
        f"warning: dead letters bad_time: {bad} of 1,000 records, e.g. cannot read event time '01/01/2024': time data "
        "'01/01/2024' does not match format '%Y-%m-%d'; input.time_format: '%m/%d/%Y' reads it (spec: input.time_format)"
    ]


@pytest.mark.parametrize("pattern", TIME_FORMATS)
def test_a_guessed_format_reads_the_date_it_was_written_as(pattern):
    moment = datetime(2023, 11, 27, 14, 35, 0)  # day 27: no month/day ambiguity
    guess = time_format_of(moment.strftime(pattern))
    assert guess is not None
    text = moment.strftime(pattern)
    expected = datetime.strptime(text, pattern).replace(tzinfo=UTC).timestamp() * 1000
    assert time_parser(guess.strip("'"))(text) == expected
