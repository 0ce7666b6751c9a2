"""A recovery store (and an output directory) belongs to one run, remembers its spec, and is refused in one line when
damaged. Real processes: a run that holds its store while it waits on a named pipe, a second run refused beside it, a
SIGKILL that frees the store; real stores truncated, overwritten and emptied."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fairstream.cli import cli
from tests.helpers import wait_until

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
SPEC = {
    "monitor": "owned",
    "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"DECIDE": {"group": "str", "hired": "bool"}}},
    "trial": {"close_on": ["DECIDE"]},
    "variables": {"group": {"first": "DECIDE", "field": "group"}, "hired": {"first": "DECIDE", "field": "hired"}},
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "hired", "groups": ["a", "b"], "threshold": 0.1},
    "estimator": {"prior": 0.5, "confidence": 10},
    "evaluate": {"every": "1d"},
}


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    path = tmp_path / "decisions.jsonl"
    with path.open("w") as out:
        for index in range(400):
            record = {"time": f"2026-01-{index // 40 + 1:02d}T{index % 24:02d}:00:00Z", "id": f"p{index}", "event": "DECIDE", "group": "ab"[index % 2], "hired": index % 3 == 0}
            out.write(json.dumps(record) + "\n")
    return path


def write_spec(path: Path, **changes) -> Path:
    spec = json.loads(json.dumps(SPEC))
    for section, value in changes.items():
        spec[section] = {**spec.get(section, {}), **value} if isinstance(value, dict) else value
    path.write_text(yaml.safe_dump(spec))
    return path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["run", *map(str, args)], env=ENV)
    return result.exit_code, result.output


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert "Traceback" not in output
    return lines[0]


def test_a_store_and_an_output_directory_in_use_are_refused_until_their_holder_is_killed(tmp_path, stream):
    spec = write_spec(tmp_path / "spec.yaml")
    pipe = tmp_path / "pipe.jsonl"
    os.mkfifo(pipe)
    store = tmp_path / "store"
    holder = subprocess.Popen(
        [sys.executable, "-m", "fairstream.cli", "run", str(spec), "--input", str(pipe), "--sorted", "--recovery", str(store), "--out", str(tmp_path / "held")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until(lambda: (store / ".fairstream.lock").exists() and (store / ".fairstream.lock").read_text() == str(holder.pid), "the run to hold its store")
        code, output = run(spec, "--input", stream, "--recovery", store, "--out", tmp_path / "other")
        assert code == 2
        assert one_error_line(output) == (
            f"error: recovery store {store} is in use by another run (process {holder.pid}): it belongs to one run; wait for that "
            "one to end, or give this run another --recovery directory"
        )
        code, output = run(spec, "--input", stream, "--out", tmp_path / "held")
        assert code == 2 and f"output directory {tmp_path / 'held'} is in use by another run (process {holder.pid})" in one_error_line(output)
        assert not (tmp_path / "other").exists() or not any((tmp_path / "other").glob("*.jsonl"))
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    code, output = run(spec, "--input", stream, "--recovery", store, "--out", tmp_path / "after")
    assert code == 0, output
    assert run(spec, "--input", stream, "--out", tmp_path / "alone")[0] == 0
    assert without_emission(tmp_path / "after") == without_emission(tmp_path / "alone")


def without_emission(out: Path) -> list[dict]:
    records = [json.loads(line) for line in (out / "estimates.jsonl").read_text().splitlines()]
    assert records
    return [{key: value for key, value in record.items() if key != "emitted_at"} for record in records]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"metric": {"threshold": 0.2}}, "metric.threshold 0.1 → 0.2"),
        ({"metric": {"groups": ["a", "b", "c"]}}, 'metric.groups ["a", "b"] → ["a", "b", "c"]'),
        ({"window": {"kind": "sliding", "length": "5d"}}, "window.kind"),
        ({"evaluate": {"every": "2d"}}, "evaluate.every"),
    ],
)
def test_a_resume_with_a_changed_spec_is_refused_naming_the_change(tmp_path, stream, change, named):
    store, out = tmp_path / "store", tmp_path / "out"
    assert run(write_spec(tmp_path / "spec.yaml"), "--input", stream, "--recovery", store, "--out", out)[0] == 0
    before = (out / "estimates.jsonl").read_bytes()
    code, output = run(write_spec(tmp_path / "changed.yaml", **change), "--input", stream, "--recovery", store, "--out", out)
    assert code == 2
    line = one_error_line(output)
    assert line.startswith(f"error: recovery store {store} was made for another spec of monitor owned (") and named in line
    assert "give a new --recovery directory to start afresh" in line
    assert (out / "estimates.jsonl").read_bytes() == before


def test_a_spec_whose_text_alone_changed_resumes(tmp_path, stream):
    store, out = tmp_path / "store", tmp_path / "out"
    spec = write_spec(tmp_path / "spec.yaml")
    assert run(spec, "--input", stream, "--recovery", store, "--out", out)[0] == 0
    spec.write_text("# the same settings, commented\n" + spec.read_text())
    code, output = run(spec, "--input", stream, "--recovery", store, "--out", out)
    assert code == 0, output


def _truncate(part: Path) -> None:
    with part.open("r+b") as handle:
        handle.truncate(part.stat().st_size // 3)


def _overwrite_pages(part: Path) -> None:
    with part.open("r+b") as handle:
        handle.seek(100)
        handle.write(b"\xff" * 4000)


def _empty(part: Path) -> None:
    part.write_bytes(b"")


def _overwrite_a_snapshot(part: Path) -> None:
    with sqlite3.connect(part) as db:
        key, blob = db.execute("SELECT state_key, ser_change FROM snaps ORDER BY length(ser_change) DESC").fetchone()
        db.execute("UPDATE snaps SET ser_change = ? WHERE state_key = ?", (blob[:10] + b"\x07" * 40 + blob[50:], key))


@pytest.mark.parametrize("damage", [_truncate, _overwrite_pages, _empty, _overwrite_a_snapshot])
def test_a_damaged_store_is_one_line_naming_it_and_what_to_do(tmp_path, stream, damage):
    store, spec = tmp_path / "store", write_spec(tmp_path / "spec.yaml")
    assert run(spec, "--input", stream, "--recovery", store, "--out", tmp_path / "out")[0] == 0
    damage(store / "part-0.sqlite3")
    code, output = run(spec, "--input", stream, "--recovery", store, "--out", tmp_path / "out")
    assert code == 1
    line = one_error_line(output)
    assert line.startswith(f"error: recovery store {store} is damaged: ") and line.endswith("move it aside and give a new --recovery directory to start afresh")


def test_a_store_made_by_an_earlier_version_without_its_spec_is_refused(tmp_path, stream):
    store, spec = tmp_path / "store", write_spec(tmp_path / "spec.yaml")
    assert run(spec, "--input", stream, "--recovery", store, "--out", tmp_path / "out")[0] == 0
    made_for = json.loads((store / "fairstream-job.json").read_text())
    del made_for["specs"]
    (store / "fairstream-job.json").write_text(json.dumps(made_for))
    code, output = run(spec, "--input", stream, "--recovery", store, "--out", tmp_path / "out")
    assert code == 2 and "does not say which spec it was made for" in one_error_line(output)


def state_of(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent, from /proc; None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    state = state_of(pid)
    return state is not None and state[0] != "Z"


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    return [int(path.name) for path in Path("/proc").glob("[0-9]*") if alive(int(path.name)) and (state_of(int(path.name)) or ("", 0))[1] == pid]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from Linux's /proc")
def test_worker_processes_die_with_a_killed_run_and_free_its_store(tmp_path, stream):
    """A run of two worker processes, SIGKILLed: its workers die with it (none goes on writing its outputs beside the
    next run), and only then is the store free."""
    spec = write_spec(tmp_path / "spec.yaml")
    pipe, store = tmp_path / "pipe.jsonl", tmp_path / "store"
    os.mkfifo(pipe)
    run_ = subprocess.Popen(
        [sys.executable, "-m", "fairstream.cli", "run", str(spec), "--input", str(pipe), "--sorted", "--processes", "2", "--recovery", str(store), "--out", str(tmp_path / "held")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until(lambda: len(children_of(run_.pid)) == 2, "the run's two worker processes")
        workers = children_of(run_.pid)
        code, output = run(spec, "--input", stream, "--recovery", store, "--out", tmp_path / "other")
        assert code == 2 and "is in use by another run" in output
    finally:
        run_.send_signal(signal.SIGKILL)
        run_.wait()
    wait_until(lambda: not any(map(alive, workers)), "the workers to die with their run", timeout=10)
    assert run(spec, "--input", stream, "--recovery", store, "--out", tmp_path / "after")[0] == 0
