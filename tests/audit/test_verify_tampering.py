"""`fairstream verify` against tampering that keeps every record's hash intact: two lines swapped, far-apart lines
swapped, an alert moved into the estimates, the last record or the last 50 removed (also of a signed run, and the
closing seal with them), a record added after the seal, and a JSON object naming a key twice with a forged value first.
Each is named with exit 1; an untouched run and a run that goes on (`--open`) verify, the latter up to its last
checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fairstream.records.chain import CHECKPOINT_EVERY
from fairstream.runner import run_file
from tests.audit.test_verify import copy_run, signed_run, write_key
from tests.conftest import SPECS


@pytest.fixture(scope="module")
def run_dir(compas_csv, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sealed")
    run_file(SPECS / "compas_equalized_odds.yaml", compas_csv, out)
    return out


def verify(directory: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", "verify", str(directory), *extra], capture_output=True, text=True, timeout=120)


def tampered(source: Path, target: Path, name: str, change) -> Path:
    """A copy of the run whose file `name` (its lines) went through `change`."""
    target.mkdir()
    for path in source.glob("*.jsonl"):
        lines = path.read_text().splitlines()
        (target / path.name).write_text("".join(line + "\n" for line in (change(lines) if path.name == name else lines)))
    return target


def seq(line: str) -> int:
    return json.loads(line)["chain"]["seq"]


def swapped(first: int, second: int):
    def change(lines: list[str]) -> list[str]:
        lines[first], lines[second] = lines[second], lines[first]
        return lines

    return change


def test_an_untouched_run_verifies_and_is_sealed(run_dir):
    result = verify(run_dir)
    assert result.returncode == 0, result.stderr
    assert "1 closed by its seal" in result.stdout and "emitted_at (when a record was written) is outside the hashes" in result.stdout
    seals = [json.loads(line) for line in (run_dir / "seals.jsonl").read_text().splitlines()]
    estimates, alerts = (len((run_dir / name).read_text().splitlines()) for name in ("estimates.jsonl", "alerts.jsonl"))
    total = estimates + alerts + len(seals)
    assert seals[-1]["final"] is True and seals[-1]["records"] == total - 1 == seals[-1]["chain"]["seq"]
    assert [seal["chain"]["seq"] for seal in seals[:-1]] == list(range(CHECKPOINT_EVERY - 1, total - 1, CHECKPOINT_EVERY))


def test_two_adjacent_lines_swapped_are_named(run_dir, tmp_path):
    lines = (run_dir / "estimates.jsonl").read_text().splitlines()
    result = verify(tampered(run_dir, tmp_path / "run", "estimates.jsonl", swapped(40, 41)))
    assert result.returncode == 1
    assert f"estimates.jsonl line 42: record {json.loads(lines[40])['alert_id']}" in result.stderr
    assert f"comes after #{seq(lines[41])} in estimates.jsonl: records out of order" in result.stderr


def test_lines_11_and_501_swapped_are_named(run_dir, tmp_path):
    result = verify(tampered(run_dir, tmp_path / "run", "estimates.jsonl", swapped(10, 500)))
    assert result.returncode == 1 and "records out of order (moved or swapped)" in result.stderr


def test_an_alert_moved_into_the_estimates_is_named(run_dir, tmp_path):
    alerts = (run_dir / "alerts.jsonl").read_text().splitlines()
    moved = alerts[0]
    target = tampered(run_dir, tmp_path / "run", "alerts.jsonl", lambda lines: lines[1:])
    estimates = (target / "estimates.jsonl").read_text().splitlines()
    place = next(index for index, line in enumerate(estimates) if seq(line) > seq(moved))  # where its place in the chain is
    (target / "estimates.jsonl").write_text("".join(line + "\n" for line in [*estimates[:place], moved, *estimates[place:]]))
    result = verify(target)
    assert result.returncode == 1
    assert "is a fairness.violation record, which is written to alerts.jsonl, not estimates.jsonl" in result.stderr


@pytest.mark.parametrize("cut", [1, 50])
def test_records_cut_from_the_end_are_named(run_dir, tmp_path, cut):
    result = verify(tampered(run_dir, tmp_path / "run", "estimates.jsonl", lambda lines: lines[:-cut]))
    assert result.returncode == 1 and " is missing (removed after it was written)" in result.stderr


def test_records_cut_from_the_end_of_a_signed_run_with_its_seal_are_named(compas_csv, tmp_path):
    write_key(tmp_path / "key.pem")
    signed_run(compas_csv, tmp_path / "run", tmp_path / "key.pem")
    key = ("--public-key", str(tmp_path / "key.pub"))
    assert verify(tmp_path / "run", *key).returncode == 0
    estimates = (tmp_path / "run" / "estimates.jsonl").read_text().splitlines()
    last_kept = seq(estimates[-51])
    cut = copy_run(tmp_path / "run", tmp_path / "cut", lambda lines: lines[:-50])
    (cut / "seals.jsonl").write_text("".join(line + "\n" for line in (tmp_path / "run" / "seals.jsonl").read_text().splitlines() if seq(line) < last_kept))
    result = verify(cut, *key)
    assert result.returncode == 1
    assert f"monitor/compas-equalized-odds: no closing seal after #{last_kept}: records were cut from its end" in result.stderr
    opened = verify(cut, *key, "--open")
    assert opened.returncode == 0 and "monitor/compas-equalized-odds is open, vouched for through #" in opened.stdout


def test_a_record_after_the_seal_is_named(run_dir, tmp_path):
    def append_copy(lines: list[str]) -> list[str]:
        return [*lines, lines[-1]]

    result = verify(tampered(run_dir, tmp_path / "run", "seals.jsonl", lambda lines: lines[:-1]))  # the closing seal removed
    assert result.returncode == 1 and "no closing seal after" in result.stderr
    assert verify(tampered(run_dir, tmp_path / "dup", "estimates.jsonl", append_copy)).returncode == 0  # a duplicate is no addition


def test_a_key_named_twice_with_a_forged_value_first_is_refused(run_dir, tmp_path):
    def forge(lines: list[str]) -> list[str]:
        record = json.loads(lines[200])
        body = json.dumps(record)[1:]
        lines[200] = '{"trials": {"closed": 1}, ' + body  # the genuine "trials" comes later: a reader that keeps the first is fooled
        return lines

    result = verify(tampered(run_dir, tmp_path / "run", "estimates.jsonl", forge))
    assert result.returncode == 1 and "estimates.jsonl line 201: record (a JSON object naming 'trials' twice) carries no chain" in result.stderr


def test_every_record_names_the_version_that_wrote_it_and_a_changed_version_is_named(run_dir, tmp_path):
    from importlib.metadata import version

    lines = [line for path in sorted(run_dir.glob("*.jsonl")) for line in path.read_text().splitlines()]
    assert {json.loads(line)["chain"]["version"] for line in lines} == {version("fairstream")}
    forged = tampered(run_dir, tmp_path / "forged", "alerts.jsonl", lambda lines: [lines[0].replace('"version":"', '"version":"9', 1), *lines[1:]])
    result = verify(forged)
    assert result.returncode == 1 and "changed" in result.stdout + result.stderr
