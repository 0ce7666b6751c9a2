"""Output files kept for a set time: a real COMPAS run's records written through rotating files under a clock the test
moves, its old segments removed and stated; `verify` links the chain across every removed segment and names a changed
statement, a segment removed without one, and a record changed next to a removed one. A resume moves back a segment
rotated after its snapshot. A real run fed through a named pipe rotates and removes by wall-clock time, and verifies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from fairstream.connectors.files import file_of
from fairstream.connectors.retention.rotating import LinesFile, Rotation
from fairstream.runner import run_file
from tests.conftest import SPECS

FILES = ("alerts.jsonl", "estimates.jsonl", "seals.jsonl")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def verify(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", "verify", str(folder)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def run_lines(compas_csv, tmp_path_factory) -> list[str]:
    """The records of a real run, in the order its files were written (by chain position)."""
    out = tmp_path_factory.mktemp("run")
    run_file(SPECS / "compas_equalized_odds.yaml", compas_csv, out)
    lines = [line for name in FILES for line in (out / name).read_text().splitlines()]
    return sorted(lines, key=lambda line: json.loads(line)["chain"]["seq"])


def rotated(lines: list[str], folder: Path, *, every: float = 10, retention: float = 35, step: float = 1) -> Path:
    """`lines` written through rotating files, one batch per record, the clock moved `step` s between batches; each
    segment's mtime set to the clock's time when it is last written, as a slow run would leave it."""
    clock = Clock()
    folder.mkdir()
    files = {name: LinesFile(folder / name, None, Rotation(every, retention), clock) for name in FILES}
    for line in lines:
        name = file_of(json.loads(line))
        files[name].write_batch([line])
        os.utime(folder / name, (clock.now, clock.now))
        clock.now += step
    for part in files.values():
        part.close()
    return folder


def test_removed_segments_are_stated_and_the_chain_verifies_across_them(run_lines, tmp_path):
    folder = rotated(run_lines, tmp_path / "out")
    statements = [json.loads(line) for line in (folder / "segments" / "removed.jsonl").read_text().splitlines()]
    kept = [json.loads(line) for path in folder.rglob("*.jsonl") if path.name != "removed.jsonl" for line in path.read_text().splitlines()]
    assert statements and sum(statement["records"] for statement in statements) + len(kept) == len(run_lines)
    assert min(record["chain"]["seq"] for record in kept) > 0  # the oldest records are gone
    checked = verify(folder)
    assert checked.returncode == 0, checked.stderr
    removed = sum(statement["records"] for statement in statements)
    assert f"{removed:,} record(s) removed by the run's retention, linked through {len(statements):,} statement(s)" in checked.stdout


def test_every_record_is_kept_at_least_the_retention(run_lines, tmp_path):
    folder = rotated(run_lines, tmp_path / "out")
    for line in (folder / "segments" / "removed.jsonl").read_text().splitlines():
        statement = json.loads(line)
        assert statement["retention_s"] == 35
        removed, written = (time_of(statement[name]) for name in ("removed_at", "last_written_at"))
        assert removed - written >= 35


def time_of(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _change_a_statement(folder: Path) -> None:
    path = folder / "segments" / "removed.jsonl"
    lines = path.read_text().splitlines()
    statement = json.loads(lines[-1])
    writer = next(iter(statement["spans"]))
    statement["spans"][writer][0]["hash"] = "0" * 64
    path.write_text("\n".join([*lines[:-1], json.dumps(statement)]) + "\n")


def _remove_a_segment_unstated(folder: Path) -> None:
    next(iter(sorted((folder / "segments").glob("estimates.*.jsonl")))).unlink()


def _change_a_kept_record(folder: Path) -> None:
    path = next(iter(sorted((folder / "segments").glob("estimates.*.jsonl"))))
    lines = path.read_text().splitlines()
    record = json.loads(lines[0])
    record["closed_trials"] = record.get("closed_trials", 0) + 1
    path.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (_change_a_statement, "does not follow"),
        (_remove_a_segment_unstated, "is missing (removed after it was written)"),
        (_change_a_kept_record, "was changed after it was written"),
    ],
)
def test_verify_names_a_change_around_the_removed_segments(run_lines, tmp_path, tamper, named):
    folder = rotated(run_lines, tmp_path / "out")
    tamper(folder)
    checked = verify(folder)
    assert checked.returncode == 1 and named in checked.stderr, checked.stderr


def test_a_resume_moves_back_a_segment_rotated_after_its_snapshot(tmp_path):
    clock = Clock()
    path = tmp_path / "estimates.jsonl"
    part = LinesFile(path, None, Rotation(10, 1000), clock)
    part.write_batch(["a", "b"])
    snapshot = part.snapshot()
    part.write_batch(["c"])
    clock.now += 11
    part.write_batch(["d"])  # rotated: c is in segment 0, d in the new live file
    part.close()
    assert snapshot == (0, 4) and (tmp_path / "segments" / "estimates.000000.jsonl").read_text() == "a\nb\nc\n"
    resumed = LinesFile(path, snapshot, Rotation(10, 1000), clock)
    resumed.write_batch(["c", "d"])
    resumed.close()
    assert path.read_text() == "a\nb\nc\nd\n" and not list((tmp_path / "segments").glob("*.jsonl"))


def test_a_real_run_rotates_and_removes_by_wall_clock_time(tmp_path):
    pipe = tmp_path / "decisions.jsonl"
    os.mkfifo(pipe)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "fairstream.cli", "run", str(SPECS / "hiring_demographic_parity.yaml"), "--input", str(pipe), "--sorted",
               "--out", str(out), "--retention", "2s", "--rotate-every", "1s"]  # fmt: skip
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events = (Path(__file__).parents[2] / "replay_data" / "hiring_sample.jsonl").read_text().splitlines()

    def feed() -> None:
        with pipe.open("w") as handle:
            for start in range(0, len(events), 50):  # 500 decisions over 5 s
                handle.write("".join(line + "\n" for line in events[start : start + 50]))
                handle.flush()
                time.sleep(0.5)

    writer = threading.Thread(target=feed)
    writer.start()
    writer.join()
    _stdout, stderr = run.communicate(timeout=120)
    assert run.returncode == 0, stderr
    assert (out / "segments" / "removed.jsonl").exists(), sorted(p.name for p in out.rglob("*"))
    checked = verify(out)
    assert checked.returncode == 0 and "removed by the run's retention" in checked.stdout, checked.stderr


def test_an_incident_bundle_of_a_run_with_removed_segments_links_the_chain_across_them(run_lines, tmp_path):
    folder = rotated(run_lines, tmp_path / "out", every=100, retention=500)
    alerts = [json.loads(line) for line in (folder / "alerts.jsonl").read_text().splitlines()]
    assert alerts and (folder / "segments" / "removed.jsonl").exists()
    bundle = tmp_path / "incident.zip"
    made = subprocess.run([sys.executable, "-m", "fairstream.cli", "incident", str(folder), "--alert", alerts[-1]["alert_id"], "--out", str(bundle)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert made.returncode == 0, made.stderr
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(tmp_path / "unpacked")
        assert "segments/removed.jsonl" in archive.namelist()
    checked = verify(tmp_path / "unpacked")
    assert checked.returncode == 0 and "removed by the run's retention" in checked.stdout, checked.stderr
