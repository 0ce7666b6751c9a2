"""The RTLola paper's runtime comparison (TACAS 2025, Fig. 6), reproduced: the seminar monitor against databases that
answer the same question after every evaluation.

The question, per closed applicant trial in close order (the monitor's `evaluate: on: close`): over the applicants
whose trial has closed, each gender's acceptance rate as a MAP estimate with the prior places / applicants (from the
seminars' SEMINAR events) at confidence κ, the gap between the genders, and whether it exceeds ε.

- `naive`: every event is inserted as it arrives, and each evaluation queries all events so far (the paper's
  database baseline): quadratic in the stream.
- `incremental`: a table of per-gender counts updated at each close, and a query over those two rows.

SQLite is in Python's standard library; DuckDB runs where it is installed. Every backend's verdicts are compared with
the monitor's, so the times are of the same answers.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fairstream.connectors.synthetic.seminar import seminar_events
from fairstream.language.plan import Plan
from fairstream.paths import SPECS_DIR
from fairstream.records.timefmt import time_parser
from fairstream.studies.runs import monitor_records, tuned_plan
from fairstream.verdicts.alerts import ESTIMATE

SPEC = SPECS_DIR / "seminar_demographic_parity.yaml"
parse_instant = time_parser("iso")
ALGORITHM = "Randomize"
"""The assignment whose scenarios are monitored (it triggers, so the verdicts compared are not all alike)."""

Verdicts = list[bool | None]
"""Per applicant evaluation, in close order: violated, or None while fewer than two genders have closed trials."""

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
    """What every backend answers: the spec's κ, ε and close-after, and each applicant trial's close (time, key)."""

    kappa: float
    epsilon: float
    close_after: int
    closes: list[tuple[int, str]]

    def verdict(self, counts: dict[str, tuple[int, int]], prior: float) -> bool | None:
        """Gap of the MAP estimates over genders with closed trials, against ε (the monitor's point verdict)."""
        estimates = [(hits + prior * self.kappa) / (trials + self.kappa) for trials, hits in counts.values() if trials > 0]
        return None if len(estimates) < 2 else max(estimates) - min(estimates) > self.epsilon


def question_of(plan: Plan, events: Sequence[dict[str, Any]]) -> Question:
    close_after = plan.spec.trial.close_after
    assert close_after is not None
    closes = sorted((parse_instant(e["time"]) + close_after, e["id"]) for e in events if e["event"] == "APPLY")
    return Question(plan.spec.estimator.confidence, plan.spec.metric.threshold or 0.0, close_after, closes)


def monitor_verdicts(plan: Plan, events: Sequence[dict[str, Any]]) -> Verdicts:
    """The monitor's verdicts at its applicant evaluations: the SEMINAR trials close at the deadline, before any
    applicant's, and their evaluations have no part yet."""
    return [record["parts"]["selection_rate"]["violated"] for record in monitor_records(plan, events) if record["type"] == ESTIMATE and record["parts"]]


def _insert(execute: Callable[..., Any], event: dict[str, Any]) -> None:
    kind = event["event"]
    if kind == "APPLY":
        execute("INSERT INTO apply VALUES (?, ?, ?)", (event["id"], parse_instant(event["time"]), event["gender"]))
    elif kind == "ACCEPT":
        execute("INSERT INTO accept VALUES (?)", (event["id"],))
    else:
        execute("INSERT INTO seminar VALUES (?, ?, ?)", (event["id"], event["places"], event["applicants"]))


def _load(connection: Any, events: Sequence[dict[str, Any]], *tables: str) -> float:
    """Create the tables, insert the events one by one as they arrive, and read the prior places / applicants."""
    for statement in (*SCHEMA, *tables):
        connection.execute(statement)
    for event in events:
        _insert(connection.execute, event)
    return connection.execute(PRIOR_QUERY).fetchone()[0]


def run_naive(connection: Any, question: Question, events: Sequence[dict[str, Any]]) -> Verdicts:
    """Insert as events arrive; at each close, one query over every event so far."""
    prior = _load(connection, events)
    verdicts: Verdicts = []
    for instant, _key in question.closes:
        rows = connection.execute(NAIVE_QUERY, (question.close_after, instant)).fetchall()
        verdicts.append(question.verdict({gender: (trials, hits) for gender, trials, hits in rows}, prior))
    return verdicts


def run_incremental(connection: Any, question: Question, events: Sequence[dict[str, Any]]) -> Verdicts:
    """Insert as events arrive; at each close, update the closing applicant's gender counts and read the two rows."""
    prior = _load(connection, events, "CREATE TABLE counts (gender TEXT PRIMARY KEY, trials BIGINT, hits BIGINT)")
    verdicts: Verdicts = []
    for _instant, key in question.closes:
        gender, accepted = connection.execute(
            "SELECT a.gender, COUNT(c.id) FROM apply a LEFT JOIN accept c ON c.id = a.id WHERE a.id = ? GROUP BY a.gender", (key,)
        ).fetchone()
        connection.execute(
            "INSERT INTO counts VALUES (?, 1, ?) ON CONFLICT (gender) DO UPDATE SET trials = trials + 1, hits = hits + excluded.hits",
            (gender, accepted),
        )
        rows = connection.execute("SELECT gender, trials, hits FROM counts").fetchall()
        verdicts.append(question.verdict({g: (trials, hits) for g, trials, hits in rows}, prior))
    return verdicts


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
    """Whether its verdicts equal the monitor's, evaluation by evaluation."""


@dataclass(frozen=True)
class SizeResult:
    applicants: int
    events: int
    evaluations: int
    monitor_seconds: float
    baselines: dict[str, Timing]
    """Per `<backend> <naive|incremental>` that ran at this size."""


def measure_size(applicants: int, baselines: Sequence[str], *, seed: int = 0) -> SizeResult:
    """Time the monitor and each baseline (`sqlite naive`, `sqlite incremental`, `duckdb naive`, …) on one scenario."""
    plan = tuned_plan(SPEC)
    events = seminar_events(ALGORITHM, seed, applicants)
    started = time.perf_counter()
    expected = monitor_verdicts(plan, events)
    monitor_seconds = time.perf_counter() - started
    question = question_of(plan, events)
    timings = {}
    for name in baselines:
        backend, kind = name.split()
        connection = BACKENDS[backend]()
        started = time.perf_counter()
        found = (run_naive if kind == "naive" else run_incremental)(connection, question, events)
        timings[name] = Timing(time.perf_counter() - started, found == expected)
        connection.close()
    return SizeResult(applicants, len(events), len(expected), monitor_seconds, timings)
