"""`fairstream bench database`: SQL written from the seminar spec's meaning (SQLite and DuckDB, naive and incremental)
gives the monitor's verdict at every evaluation, and the command prints the comparison."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.connectors.synthetic.seminar import seminar_events
from fairstream.lab.bench.database import ALGORITHM, SPEC, json_lines, measure_size, monitor_turns, question_of, run_incremental, turns_of
from fairstream.lab.studies.runs import tuned_plan
from fairstream.records.envelope import RECOVERED, VIOLATION


@pytest.mark.parametrize("seed", [0, 3])
def test_every_database_baseline_reaches_the_monitors_verdicts(seed):
    result = measure_size(300, ["sqlite naive", "sqlite incremental", "duckdb naive"], seed=seed)
    assert result.evaluations == 300
    assert {name: timing.agrees for name, timing in result.baselines.items()} == dict.fromkeys(result.baselines, True)


def test_the_verdict_stream_turns_where_the_databases_verdicts_turn():
    result = measure_size(3000, ["sqlite incremental"], seed=0, threshold=0.03)  # ε low enough that the verdict turns
    assert result.baselines["sqlite incremental"].agrees
    plan = tuned_plan(SPEC, threshold=0.03)
    events = seminar_events(ALGORITHM, 0, 3000)
    turns = monitor_turns(plan, json_lines(events))
    assert len(turns) >= 4 and {kind for _, kind in turns} == {VIOLATION, RECOVERED}
    found = run_incremental(sqlite3.connect(":memory:"), question_of(plan), events)
    assert turns_of(found) == turns
    late = [(instant, verdict) for (instant, _), (_, verdict) in zip(found[1:], found)]
    assert turns_of(late) != turns  # verdicts one close late would not pass


def test_bench_database_prints_a_row_per_size_and_the_agreement():
    result = CliRunner().invoke(cli, ["bench", "database", "--applicants", "100,200", "--naive-up-to", "100"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "│" in line]
    assert [row.split("│")[0].strip() for row in rows] == ["100", "200"]
    assert rows[1].split("│")[4].strip() == "–"  # the naive baselines stop at --naive-up-to
    assert result.stdout.splitlines()[-1].endswith("verdicts identical to the monitor's: all")
