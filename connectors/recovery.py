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
import pickle
import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from fairstream.process.lifecycle import panic_reports_hidden
from fairstream.process.ownership import LOCK
from fairstream.records.errors import ConnectorError, UsageError

MADE_FOR = "fairstream-job.json"
"""The file in a recovery store that says which input, monitors and specs its snapshots belong to."""
TABLES = frozenset({"parts", "exs", "fronts", "commits", "snaps"})
"""The tables every partition of a bytewax 0.21 store holds."""
START_AFRESH = "give a new --recovery directory to start afresh"


def claim_store(store: Path, made_for: dict[str, Any]) -> None:
    """Record what a new store is made for, or refuse (one line, exit 2) a store made for another input, partition layout,
    set of monitors or spec: its snapshots would resume partitions and steps this job does not have, or go on with the
    old spec's settings under the new one's name."""
    path = store / MADE_FOR
    if not path.exists():
        written = path.with_suffix(".partial")
        try:
            written.write_text(json.dumps(made_for, sort_keys=True))
            written.replace(path)  # whole or not at all
        except OSError as err:
            written.unlink(missing_ok=True)
            raise ConnectorError(f"cannot write the recovery store {store}: {err.strerror}; free space or make it writable, then run again") from None
        return
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        reason = err.strerror if isinstance(err, OSError) else "not the JSON it was written as"
        raise ConnectorError(f"recovery store {store}: {path.name} cannot be read ({reason}); {START_AFRESH}") from None
    if not isinstance(recorded, dict):
        raise ConnectorError(f"recovery store {store}: {path.name} is not what fairstream writes; {START_AFRESH}")
    recorded_specs, specs = recorded.pop("specs", None), made_for.get("specs")
    layout = {key: value for key, value in made_for.items() if key != "specs"}
    if recorded != layout:
        raise UsageError(f"recovery store {store} was made for {_describe(recorded)}; this run is {_describe(layout)}: give a new --recovery directory")
    if recorded_specs is None:
        raise UsageError(f"recovery store {store} does not say which spec it was made for (an earlier fairstream made it); {START_AFRESH}")
    if recorded_specs != specs:
        monitor = next(name for name in sorted(specs or {}) if recorded_specs.get(name) != specs.get(name))  # type: ignore[union-attr]
        changes = spec_changes(recorded_specs.get(monitor, {}), specs[monitor])  # type: ignore[index]
        raise UsageError(
            f"recovery store {store} was made for another spec of monitor {monitor} ({changes}); its snapshots hold the "
            f"old spec's counts and alert states, so a resume would go on under the old settings: {START_AFRESH}, or resume with the old spec"
        )


def spec_changes(before: dict[str, Any], after: dict[str, Any], limit: int = 3) -> str:
    """The settings that differ between two specs, by field path: `metric.threshold 0.1 → 0.2, window.kind …`."""
    old, new = dict(_flat(before)), dict(_flat(after))
    changed = [path for path in sorted(old.keys() | new.keys()) if old.get(path, "—") != new.get(path, "—")]
    shown = [f"{path} {json.dumps(old.get(path))} → {json.dumps(new.get(path))}" for path in changed[:limit]]
    return ", ".join(shown) + (f" and {len(changed) - limit} more" if len(changed) > limit else "")


def _flat(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from _flat(inner, f"{path}.{key}" if path else str(key))
    else:
        yield path, value


def _describe(made_for: dict[str, object]) -> str:
    return f"{made_for.get('input')} ({made_for.get('partitions')} partition(s)), {made_for.get('job')} {made_for.get('monitors')}"


def prepare_store(store: Path) -> int:
    """Create the store (one partition) if it holds nothing yet, else check it and drop abandoned snapshots; returns how
    many were dropped. A store that cannot be written or read is one line naming the path and what to do (exit 1)."""
    try:
        if not store.exists() or not any(path.name != LOCK for path in store.iterdir()):
            store.mkdir(parents=True, exist_ok=True)
            _make_partition(store)
            return 0
    except OSError as err:
        raise ConnectorError(f"cannot make the recovery store {store}: {err.strerror}") from None
    check_store(store)
    return drop_abandoned_snapshots(store)


def _make_partition(store: Path) -> None:
    """bytewax's one partition, or nothing where SQLite cannot make it whole (bytewax panics then: a full disk)."""
    from bytewax.recovery import init_db_dir  # only a recovery store needs bytewax: the plain engine runs without one

    try:
        with panic_reports_hidden():
            init_db_dir(store, 1)
    except BaseException as err:  # pyo3's PanicException is a BaseException
        if type(err).__name__ != "PanicException":
            raise
        for part in store.glob("part-*.sqlite3*"):
            part.unlink()
        found = _SQLITE_FAILURE.search(str(err))
        raise ConnectorError(f"cannot make the recovery store {store}: {found.group(1) if found else err}; free space or make it writable, then run again") from None


def check_store(store: Path) -> None:
    """Refuse (one line, exit 1) a store whose partitions SQLite cannot read whole: truncated, overwritten or emptied."""
    for part in _parts(store):
        try:
            with closing(sqlite3.connect(f"file:{part}?mode=ro", uri=True)) as db:
                verdict = db.execute("PRAGMA quick_check").fetchone()[0]
                tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as err:
            verdict, tables = str(err), TABLES
        if verdict != "ok" or not TABLES <= tables:
            found = [line for line in verdict.splitlines() if line and not line.startswith("***")]
            what = found[0] if verdict != "ok" else f"it lacks the table(s) {', '.join(sorted(TABLES - tables))}"
            raise ConnectorError(f"recovery store {store} is damaged: {part.name} is not a whole snapshot database ({what}); move it aside and {START_AFRESH}")


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
        try:
            with closing(sqlite3.connect(part)) as db, db:
                dropped += db.execute("DELETE FROM snaps WHERE snap_epoch >= ?", (epoch,)).rowcount
        except sqlite3.Error as err:
            raise ConnectorError(f"cannot clear the recovery store {store} of abandoned snapshots ({part.name}: {err}); free space or fix its permissions, then run again") from None
    return dropped


_SQLITE_FAILURE = re.compile(r'SqliteFailure\(.*?Some\("([^"]*)"\)')


def store_failure(store: Path, err: BaseException) -> ConnectorError | None:
    """What went wrong with the store, where `err` (raised out of the dataflow) comes from it: a snapshot that cannot be
    unpickled (bytes overwritten or cut inside it), or SQLite failing to write one (a full disk, a read-only file
    system); None for any other error."""
    if isinstance(err, pickle.UnpicklingError | EOFError):
        return ConnectorError(f"recovery store {store} is damaged: a snapshot in it cannot be read ({str(err).rstrip('.')}); move it aside and {START_AFRESH}")
    found = _SQLITE_FAILURE.search(str(err))
    if found is None:
        return None
    return ConnectorError(
        f"cannot write the recovery store {store}: {found.group(1)}; free space or make it writable, then run again with the "
        "same --recovery (the run goes on from its last snapshot, its records as if never stopped)"
    )
