"""The bytewax recovery store of a job: created when missing, and cleared of abandoned snapshots before each resume.

bytewax 0.21.1 resumes from the latest snapshot of each state key taken before the resume epoch, but it never removes
the snapshots a killed execution wrote for epochs it did not finish. When the next execution resumes at or before
those epochs and leaves some state key untouched in them (a step that saw no item yet while the source reconnected),
the abandoned snapshot survives; once a later epoch is committed, a third execution loads it beside the source's own
position, and state runs ahead of the input (every replayed event is then late). Dropping every snapshot at or after
the resume epoch before the run starts leaves exactly what the resume may use.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from bytewax.recovery import init_db_dir

from fairstream.records.errors import ConnectorError, UsageError

MADE_FOR = "fairstream-job.json"
"""The file in a recovery store that says which input and monitors its snapshots belong to."""


def claim_store(store: Path, made_for: dict[str, object]) -> None:
    """Record what a new store is made for, or refuse (one line, exit 2) a store made for another input, partition layout
    or set of monitors: its snapshots would resume partitions and steps this job does not have."""
    path = store / MADE_FOR
    if not path.exists():
        path.write_text(json.dumps(made_for, sort_keys=True))
        return
    recorded = json.loads(path.read_text())
    if recorded != made_for:
        raise UsageError(f"recovery store {store} was made for {_describe(recorded)}; this run is {_describe(made_for)}: give a new --recovery directory")


def _describe(made_for: dict[str, object]) -> str:
    return f"{made_for.get('input')} ({made_for.get('partitions')} partition(s)), {made_for.get('job')} {made_for.get('monitors')}"


def prepare_store(store: Path) -> int:
    """Create the store (one partition) if it holds nothing yet, else drop abandoned snapshots; returns how many were dropped."""
    if not store.exists() or not any(store.iterdir()):
        store.mkdir(parents=True, exist_ok=True)
        init_db_dir(store, 1)
        return 0
    return drop_abandoned_snapshots(store)


def _parts(store: Path) -> list[Path]:
    parts = sorted(store.glob("*.sqlite3"))
    if not parts:
        raise ConnectorError(f"recovery store {store} holds no partitions (part-*.sqlite3); use an empty or a new directory")
    return parts


def resume_epoch(store: Path) -> int | None:
    """The epoch the next execution resumes at, computed as bytewax does: over the workers of the latest execution, the
    least of each one's frontier (or the execution's own resume epoch where it recorded none); None before any execution."""
    executions: list[tuple[int, int, int]] = []
    fronts: list[tuple[int, int, int]] = []
    for part in _parts(store):
        with closing(sqlite3.connect(part)) as db:
            executions += db.execute("SELECT ex_num, worker_count, resume_epoch FROM exs").fetchall()
            fronts += db.execute("SELECT ex_num, worker_index, worker_frontier FROM fronts").fetchall()
    if not executions:
        return None
    latest, workers, resumed_at = max(executions)
    reached = {worker: frontier for ex_num, worker, frontier in fronts if ex_num == latest}
    return min(max(reached.get(worker, resumed_at), resumed_at) for worker in range(workers))


def drop_abandoned_snapshots(store: Path) -> int:
    """Delete the snapshots of epochs at or after the resume epoch: written by executions that died before finishing them."""
    epoch = resume_epoch(store)
    if epoch is None:
        return 0
    dropped = 0
    for part in _parts(store):
        with closing(sqlite3.connect(part)) as db, db:
            dropped += db.execute("DELETE FROM snaps WHERE snap_epoch >= ?", (epoch,)).rowcount
    return dropped
