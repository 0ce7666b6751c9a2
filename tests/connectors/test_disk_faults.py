"""A full disk or a file system turned read-only, under the outputs or the recovery store, at start or mid-run: one
line naming the path and the cause, exit 1, no traceback; once space is freed, the same --recovery resumes into the
undisturbed run's records, and `verify` passes. Real faults: small tmpfs mounts (root only), remounted larger or
read-only, and the kernel's file-size limit (RLIMIT_FSIZE) reached mid-run."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

SPEC = """\
monitor: disk-faults
input: {time: time, key: id, kind: event, kinds: {APPLY: {group: str}, DECISION: {approved: bool}}}
trial: {opens_on: [APPLY], close_on: [DECISION], close_after: 10d}
variables:
  group: {first: APPLY, field: group}
  approved: {first: DECISION, field: approved}
metric: {type: demographic_parity, group: group, prediction: approved, groups: [A, B], threshold: 0.1}
estimator: {verdict: anytime, alpha: 0.05}
evaluate: {every: 1h}
"""


def _can_mount() -> bool:
    if os.geteuid() != 0:
        return False
    probe = Path(f"/tmp/fairstream-mount-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    try:
        return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True).returncode == 0 and (
            subprocess.run(["umount", str(probe)], capture_output=True).returncode == 0
        )
    finally:
        probe.rmdir()


pytestmark = pytest.mark.skipif(not _can_mount(), reason="mounting a small tmpfs needs root (as CI runs): the disk-fault tests make the fault for real")


class Tmpfs:
    """A tmpfs of a given size at `path`, to fill, grow or turn read-only."""

    def __init__(self, path: Path, size: str):
        self.path = path
        path.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)

    def remount(self, options: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{options}", str(self.path)], check=True)

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], check=True)


@pytest.fixture
def tmpfs(tmp_path):
    mounted: list[Tmpfs] = []

    def mount(size: str) -> Tmpfs:
        mounted.append(Tmpfs(tmp_path / f"tmpfs{len(mounted)}", size))
        return mounted[-1]

    yield mount
    for disk in mounted:
        disk.unmount()


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """The spec, 40,000 events whose hourly estimates fill a few megabytes, and the undisturbed run's records."""
    folder = tmp_path_factory.mktemp("scene")
    (folder / "spec.yaml").write_text(SPEC)
    with (folder / "events.jsonl").open("w") as out:
        for index in range(20_000):
            minutes = 10 * index
            day, hour, minute = minutes // 1440, minutes // 60 % 24, minutes % 60
            group, approved = "AB"[index * 7 % 3 % 2], index * 13 % 5 < (3 if index % 2 else 2)
            out.write(json.dumps({"time": f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}T{hour:02d}:{minute:02d}:00Z", "id": f"p{index}", "event": "APPLY", "group": group}) + "\n")
            out.write(json.dumps({"time": f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}T{hour:02d}:{minute:02d}:30Z", "id": f"p{index}", "event": "DECISION", "approved": approved}) + "\n")
    code, _ = fairstream("run", folder / "spec.yaml", "--input", folder / "events.jsonl", "--out", folder / "undisturbed")
    assert code == 0
    return folder


def fairstream(*args) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "fairstream.cli", *map(str, args)], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    return done.returncode, done.stdout + done.stderr


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    return lines[0]


def records(out: Path) -> dict[str, list[dict]]:
    read = {}
    for name in ("alerts.jsonl", "estimates.jsonl", "seals.jsonl"):
        read[name] = [{k: v for k, v in json.loads(line).items() if k != "emitted_at"} for line in (out / name).read_text().splitlines()]
    return read


def resumed_equals_undisturbed(scene: Path, out: Path, store: Path) -> None:
    code, output = fairstream("run", scene / "spec.yaml", "--input", scene / "events.jsonl", "--out", out, "--recovery", store)
    assert code == 0, output
    assert records(out) == records(scene / "undisturbed")
    assert fairstream("verify", out)[0] == 0


@pytest.mark.parametrize(
    ("under", "size", "said"),
    [
        ("out", "1m", "error: cannot write {out}/estimates.jsonl: No space left on device; free space or make it writable"),
        ("store", "300k", "error: cannot write the recovery store {store}: database or disk is full; free space"),
    ],
)
def test_a_full_disk_mid_run_is_one_line_and_a_resume_gives_the_undisturbed_records(scene, tmpfs, tmp_path, under, size, said):
    disk = tmpfs(size)
    out, store = (disk.path / "out", tmp_path / "store") if under == "out" else (tmp_path / "out", disk.path / "store")
    code, output = fairstream("run", scene / "spec.yaml", "--input", scene / "events.jsonl", "--out", out, "--recovery", store, "--snapshot-every", "0.1")
    assert code == 1
    assert one_error_line(output).startswith(said.format(out=out, store=store))
    disk.remount("size=64m")
    resumed_equals_undisturbed(scene, out, store)


def test_a_store_that_cannot_be_made_is_one_line(scene, tmpfs, tmp_path):
    disk = tmpfs("40k")
    code, output = fairstream("run", scene / "spec.yaml", "--input", scene / "events.jsonl", "--out", tmp_path / "out", "--recovery", disk.path / "store")
    assert code == 1
    line = one_error_line(output)
    assert line.startswith(("error: cannot write the recovery store", "error: cannot make the recovery store")) and str(disk.path / "store") in line


def test_outputs_past_a_file_size_limit_mid_run_are_one_line_and_a_resume_gives_the_undisturbed_records(scene, tmp_path):
    out, store = tmp_path / "out", tmp_path / "store"

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2_000_000, 2_000_000))  # the kernel refuses writes past it (EFBIG)

    done = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", str(scene / "spec.yaml"), "--input", str(scene / "events.jsonl"), "--out", str(out), "--recovery", str(store), "--snapshot-every", "0.1"],
        capture_output=True, text=True, preexec_fn=limited, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 1
    assert one_error_line(done.stdout + done.stderr).startswith(f"error: cannot write {out / 'estimates.jsonl'}: File too large; free space or make it writable")
    resumed_equals_undisturbed(scene, out, store)


@pytest.mark.parametrize("under", ["out", "store"])
def test_a_read_only_file_system_at_start_is_one_line(scene, tmpfs, tmp_path, under):
    disk = tmpfs("1m")
    (disk.path / under).mkdir()
    disk.remount("ro")
    out, store = (disk.path / "out", tmp_path / "store") if under == "out" else (tmp_path / "out", disk.path / "store")
    code, output = fairstream("run", scene / "spec.yaml", "--input", scene / "events.jsonl", "--out", out, "--recovery", store)
    assert code == 1
    assert one_error_line(output) == f"error: cannot write to the {'output directory' if under == 'out' else 'recovery store'} {disk.path / under}: Read-only file system"
