"""The RTLola paper's runtime comparison (TACAS 2025, Fig. 6), reproduced: the seminar monitor against databases that
answer the same question after every evaluation.

The question, per closed applicant trial in close order (the monitor's `evaluate: on: close`): over the applicants
whose trial has closed, each gender's acceptance rate as a MAP estimate with the prior places / applicants (from the
seminars' SEMINAR events) at confidence κ, the gap between the genders, and whether it exceeds ε.

The monitor runs twice: writing an estimate record at every close, and as a verdict stream (`publish.every:
1000 closes`: every close judged, an alert the instant a verdict turns, an estimate per 1,000 closes and per change),
which is what the databases answer.

Every backend consumes the same event stream in order, timed from its first event: each event's time parsed, the
applicant trials it has passed closed in close order (their close times kept in a heap as applications arrive), then
the event inserted, as the monitor reads, closes and counts inside its own timer. The monitor reads the stream as JSON
lines, a block at a time as from a file or a topic, and decodes them inside its timer; the databases get the events
decoded.

- `naive`: each evaluation queries all events so far (the paper's database baseline): quadratic in the stream.
- `incremental`: a table of per-gender counts updated at each close (and seminar totals updated as seminars
  arrive), and a query over those few rows.

SQLite is in Python's standard library; DuckDB runs where it is installed. Every backend's verdicts are compared with
the monitor's, so the times are of the same answers.
"""

from __future__ import annotations

import gc
import heapq
import importlib.util
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from fairstream.compiler.plan import Plan
from fairstream.connectors.files import RecordSource
from fairstream.connectors.synthetic.seminar import seminar_events
from fairstream.dataflow.flow import build_flow
from fairstream.engine.api import run_main
from fairstream.lab.bench.sink import CountingSink
from fairstream.lab.studies.runs import tuned_plan, unsuppressed
from fairstream.paths import SPECS_DIR
from fairstream.records.envelope import ESTIMATE, RECOVERED, VIOLATION
from fairstream.records.timefmt import format_instant, time_parser

SPEC = SPECS_DIR / "seminar_demographic_parity.yaml"
parse_instant = time_parser("iso")
ALGORITHM = "Randomize"
"""The assignment whose scenarios are monitored (it triggers, so the verdicts compared are not all alike)."""

Verdicts = list[bool | None]
"""Per applicant evaluation, in close order: violated, or None while fewer than two genders have closed trials."""
Closes = list[tuple[int, bool | None]]
"""Per applicant evaluation, in close order: its close time and verdict (as `Verdicts`)."""
Turns = list[tuple[str, str]]
"""Where the verdict turned, in close order: (event time, violation or recovery)."""
VERDICT_CADENCE = ("closes", 1000)
"""The verdict stream's `publish.every`: an estimate record per 1,000 closes and at every change."""

SCHEMA = (
    "CREATE TABLE apply (id TEXT PRIMARY KEY, time BIGINT, gender TEXT)",
    "CREATE TABLE accept (id TEXT PRIMARY KEY)",
    "CREATE TABLE seminar (id TEXT PRIMARY KEY, places BIGINT, applicants BIGINT)",
)
NAIVE_QUERY = """
SELECT a.gender, COUNT(*), COUNT(c.id)
FROM apply a LEFT JOIN accept c ON c.id = a.id
WHERE a.time + ? <= ?
GROUP BY a.gender
"""
PRIOR_QUERY = "SELECT CAST(SUM(places) AS DOUBLE) / SUM(applicants) FROM seminar"


@dataclass(frozen=True)
class Question:
    """What every backend answers: the spec's κ, ε and close-after."""

    kappa: float
    epsilon: float
    close_after: int

    def verdict(self, counts: dict[str, tuple[int, int]], prior: float) -> bool | None:
        """Gap of the MAP estimates over genders with closed trials, against ε (the monitor's point verdict)."""
        estimates = [(hits + prior * self.kappa) / (trials + self.kappa) for trials, hits in counts.values() if trials > 0]
        return None if len(estimates) < 2 else max(estimates) - min(estimates) > self.epsilon


def question_of(plan: Plan) -> Question:
    close_after = plan.spec.trial.close_after
    assert close_after is not None
    return Question(plan.spec.estimator.confidence, plan.spec.metric.threshold or 0.0, close_after)


def json_lines(events: Sequence[dict[str, Any]]) -> list[bytes]:
    """The events as JSON lines in blocks of about a mebibyte, as the monitor reads a file or a topic's batches."""
    lines = [orjson.dumps(event, option=orjson.OPT_APPEND_NEWLINE) for event in events]
    blocks, size, start = [], 0, 0
    for index, line in enumerate(lines):
        size += len(line)
        if size >= 1 << 20 or index == len(lines) - 1:
            blocks.append(b"".join(lines[start : index + 1]))
            size, start = 0, index + 1
    return blocks


def monitor_records(plan: Plan, blocks: list[bytes]) -> list[dict[str, Any]]:
    """Every record the monitor emits over the JSON lines, read a block at a time (every cell's counts published)."""
    records: list[dict[str, Any]] = []
    run_main(build_flow(unsuppressed(plan), RecordSource(lambda: blocks, blocks=True), CountingSink(lambda _counts, item: records.append(item))))
    return records


def monitor_verdicts(plan: Plan, blocks: list[bytes]) -> Verdicts:
    """The monitor's verdicts at its applicant evaluations: the SEMINAR trials close at the deadline, before any
    applicant's, and their evaluations have no part yet."""
    return [record["parts"]["selection_rate"]["violated"] for record in monitor_records(plan, blocks) if record["type"] == ESTIMATE and record["parts"]]


def monitor_turns(plan: Plan, blocks: list[bytes]) -> Turns:
    """The monitor as a verdict stream (`VERDICT_CADENCE`): where its alerts say the verdict turned."""
    cadenced = replace(plan, monitor=replace(plan.monitor, publishing=replace(plan.monitor.publishing, every=VERDICT_CADENCE)))
    return [(record["event_time"], record["type"]) for record in monitor_records(cadenced, blocks) if record["type"] in (VIOLATION, RECOVERED)]


def turns_of(verdicts: Closes) -> Turns:
    """Where a verdict per close turns (the seminar spec has no hysteresis: a violation ends at the first close within ε)."""
    violated, turns = False, []
    for instant, verdict in verdicts:
        if verdict is not None and verdict != violated:
            violated = verdict
            turns.append((format_instant(instant), VIOLATION if verdict else RECOVERED))
    return turns


def _insert(execute: Callable[..., Any], event: dict[str, Any], instant: int) -> None:
    kind = event["event"]
    if kind == "APPLY":
        execute("INSERT INTO apply VALUES (?, ?, ?)", (event["id"], instant, event["gender"]))
    elif kind == "ACCEPT":
        execute("INSERT INTO accept VALUES (?)", (event["id"],))
    else:
        execute("INSERT INTO seminar VALUES (?, ?, ?)", (event["id"], event["places"], event["applicants"]))


def _stream(
    connection: Any,
    question: Question,
    events: Sequence[dict[str, Any]],
    tables: Sequence[str],
    evaluate: Callable[[int, str], bool | None],
    on_seminar: str | None = None,
) -> Closes:
    """Consume the event stream in order, as the monitor does: parse each event's time, close every applicant trial
    whose close time it has passed (in close order, `evaluate` answering the question at each), then insert the event
    (and run `on_seminar` with a seminar's places and applicants). The close times are kept in a heap as applications
    arrive; the stream's end closes the rest."""
    for statement in (*SCHEMA, *tables):
        connection.execute(statement)
    execute = connection.execute
    pending: list[tuple[int, str]] = []
    verdicts: Closes = []
    for event in events:
        instant = parse_instant(event["time"])
        while pending and pending[0][0] < instant:
            closed = heapq.heappop(pending)
            verdicts.append((closed[0], evaluate(*closed)))
        _insert(execute, event, instant)
        if on_seminar is not None and event["event"] == "SEMINAR":
            execute(on_seminar, (event["places"], event["applicants"]))
        if event["event"] == "APPLY":
            heapq.heappush(pending, (instant + question.close_after, event["id"]))
    while pending:
        closed = heapq.heappop(pending)
        verdicts.append((closed[0], evaluate(*closed)))
    return verdicts


def run_naive(connection: Any, question: Question, events: Sequence[dict[str, Any]]) -> Closes:
    """At each close, one query over every event so far, and one for the prior (the paper's database baseline)."""

    def evaluate(instant: int, _key: str) -> bool | None:
        rows = connection.execute(NAIVE_QUERY, (question.close_after, instant)).fetchall()
        prior = connection.execute(PRIOR_QUERY).fetchone()[0]
        return question.verdict({gender: (trials, hits) for gender, trials, hits in rows}, prior)

    return _stream(connection, question, events, (), evaluate)


COUNTS_TABLE = "CREATE TABLE counts (gender TEXT PRIMARY KEY, trials BIGINT, hits BIGINT)"
TOTALS_TABLE = "CREATE TABLE totals (one INTEGER PRIMARY KEY, places BIGINT, applicants BIGINT)"
ADD_SEMINAR = (
    "INSERT INTO totals VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE "
    "SET places = totals.places + excluded.places, applicants = totals.applicants + excluded.applicants"
)


def run_incremental(connection: Any, question: Question, events: Sequence[dict[str, Any]]) -> Closes:
    """At each close, update the closing applicant's gender counts and read the two rows and the prior's totals (kept
    up to date as seminars arrive)."""

    def evaluate(_instant: int, key: str) -> bool | None:
        gender, accepted = connection.execute(
            "SELECT a.gender, COUNT(c.id) FROM apply a LEFT JOIN accept c ON c.id = a.id WHERE a.id = ? GROUP BY a.gender", (key,)
        ).fetchone()
        connection.execute(
            "INSERT INTO counts VALUES (?, 1, ?) ON CONFLICT (gender) DO UPDATE SET trials = trials + 1, hits = hits + excluded.hits",
            (gender, accepted),
        )
        rows = connection.execute("SELECT gender, trials, hits FROM counts").fetchall()
        places, applicants = connection.execute("SELECT places, applicants FROM totals").fetchone()
        return question.verdict({g: (trials, hits) for g, trials, hits in rows}, places / applicants)

    return _stream(connection, question, events, (COUNTS_TABLE, TOTALS_TABLE), evaluate, ADD_SEMINAR)


def duckdb_available() -> bool:
    return importlib.util.find_spec("duckdb") is not None


BACKENDS: dict[str, Callable[[], Any]] = {
    "sqlite": lambda: sqlite3.connect(":memory:"),
    "duckdb": lambda: __import__("duckdb").connect(":memory:"),
}


@dataclass(frozen=True)
class Timing:
    seconds: float
    agrees: bool
    """Whether its verdicts equal the monitor's, evaluation by evaluation, and turn where the verdict stream's alerts say."""


@dataclass(frozen=True)
class SizeResult:
    applicants: int
    events: int
    evaluations: int
    monitor_seconds: float
    """The monitor writing an estimate record at every close."""
    stream_seconds: float
    """The monitor as a verdict stream (`VERDICT_CADENCE`)."""
    baselines: dict[str, Timing]
    """Per `<backend> <naive|incremental>` that ran at this size."""


def measure_size(applicants: int, baselines: Sequence[str], *, seed: int = 0, threshold: float | None = None) -> SizeResult:
    """Time the monitor and each baseline (`sqlite naive`, `sqlite incremental`, `duckdb naive`, …) on one scenario
    (`threshold`: ε in place of the spec's)."""
    plan = tuned_plan(SPEC, threshold=threshold)
    events = seminar_events(ALGORITHM, seed, applicants)
    blocks = json_lines(events)  # the monitor reads JSON, as from a file or topic; the databases get the decoded events
    gc.collect()  # each run starts without the garbage of the one before
    started = time.perf_counter()
    turns = monitor_turns(plan, blocks)
    stream_seconds = time.perf_counter() - started
    gc.collect()
    started = time.perf_counter()
    expected = monitor_verdicts(plan, blocks)
    monitor_seconds = time.perf_counter() - started
    question = question_of(plan)
    timings = {}
    for name in baselines:
        backend, kind = name.split()
        connection = BACKENDS[backend]()
        gc.collect()
        started = time.perf_counter()
        found = (run_naive if kind == "naive" else run_incremental)(connection, question, events)
        timings[name] = Timing(time.perf_counter() - started, [verdict for _, verdict in found] == expected and turns_of(found) == turns)
        connection.close()
    return SizeResult(applicants, len(events), len(expected), monitor_seconds, stream_seconds, timings)
