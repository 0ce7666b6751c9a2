"""`fairstream incident`: a bundle of a real COMPAS run's alert verifies unpacked with nothing else at hand; it holds
exactly the alert's chain up to the first seal at or after it (read from the run's files here), the spec, the figure and
the sums `sha256sum -c` checks; the same alert gives the same bytes; a changed, added or removed record, another spec
or a forged manifest is named by `verify`; an alert no seal vouches for yet, an unknown alert, a wrong spec and a run
that does not verify are one line each."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fairstream.runner import run_file
from tests.conftest import SPECS

SPEC = SPECS / "compas_equalized_odds.yaml"


def fairstream(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", *args], capture_output=True, text=True, timeout=180, cwd=cwd)


def lines_of(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def run_dir(compas_csv, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    run_file(SPEC, compas_csv, out)
    return out


@pytest.fixture(scope="module")
def alert(run_dir) -> dict:
    return json.loads((run_dir / "alerts.jsonl").read_text().splitlines()[0])


@pytest.fixture(scope="module")
def bundle(run_dir, alert, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "incident.zip"
    made = fairstream("incident", str(run_dir), "--alert", alert["alert_id"], "--out", str(out))
    assert made.returncode == 0, made.stderr
    return out


def unpack(bundle: Path, folder: Path) -> Path:
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(folder)
    return folder


def test_the_unpacked_bundle_verifies_alone_and_holds_the_chain_up_to_its_seal(bundle, run_dir, alert, tmp_path):
    folder = unpack(bundle, tmp_path / "unpacked")
    checked = fairstream("verify", ".", cwd=folder)
    assert checked.returncode == 0, checked.stderr
    assert f"incident bundle of alert {alert['alert_id']}" in checked.stdout
    run = sorted(lines_of(run_dir), key=lambda record: record["chain"]["seq"])
    seal = next(r for r in run if r["type"] == "pipeline.seal" and r["chain"]["seq"] >= alert["chain"]["seq"])
    expected = [r for r in run if r["chain"]["seq"] <= seal["chain"]["seq"]]
    assert sorted(lines_of(folder), key=lambda record: record["chain"]["seq"]) == expected
    assert seal["final"] is False  # cut at a checkpoint, not the run's end: the records after it are not in the bundle
    assert (folder / SPEC.name).read_bytes() == SPEC.read_bytes()
    assert (folder / "fairness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    manifest = json.loads((folder / "incident.json").read_text())
    assert manifest["versions"]["python"] == ".".join(map(str, sys.version_info[:3]))
    sums = dict(reversed(line.split("  ")) for line in (folder / "SHA256SUMS").read_text().splitlines())
    assert sums.keys() == {path.name for path in folder.iterdir()} - {"SHA256SUMS"}
    assert all(hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest for name, digest in sums.items())


def test_the_same_alert_gives_the_same_bytes(bundle, run_dir, alert, tmp_path):
    again = tmp_path / "again.zip"
    assert fairstream("incident", str(run_dir), "--alert", alert["alert_id"], "--out", str(again), "--spec", str(SPEC)).returncode == 0
    assert again.read_bytes() == bundle.read_bytes()


def _change_a_rate(folder: Path) -> None:
    path = folder / "estimates.jsonl"
    path.write_text(path.read_text().replace('"hits":46', '"hits":45', 1))


def _drop_the_seal(folder: Path) -> None:
    path = folder / "seals.jsonl"
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines()[:-1]))


def _add_a_file(folder: Path) -> None:
    (folder / "dead_letters.jsonl").write_text("")  # no record in it: only the manifest tells it was not there


def _another_spec(folder: Path) -> None:
    spec = next(folder.glob("*.yaml"))
    spec.write_text(spec.read_text().replace("threshold: 0.1", "threshold: 0.2"))


def _forge_the_manifest(folder: Path) -> None:
    path = folder / "incident.json"
    manifest = json.loads(path.read_text())
    manifest["alert_seq"] += 1
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (_change_a_rate, "was changed after it was written"),
        (_drop_the_seal, "the chain is to end at its seal"),
        (_add_a_file, "is in the bundle but not in its manifest"),
        (_another_spec, "is not the spec the bundle was made with"),
        (_forge_the_manifest, "is not record #"),
    ],
)
def test_verify_names_what_was_changed_in_a_bundle(bundle, tmp_path, tamper, named):
    folder = unpack(bundle, tmp_path / "unpacked")
    tamper(folder)
    checked = fairstream("verify", str(folder))
    assert checked.returncode == 1 and named in checked.stderr, checked.stderr


def test_an_alert_no_seal_vouches_for_yet_is_one_line(run_dir, alert, tmp_path):
    going_on = tmp_path / "going-on"
    going_on.mkdir()
    for path in run_dir.glob("*.jsonl"):  # the run as it stood right after the alert: no seal since
        kept = [line for line in path.read_text().splitlines() if json.loads(line)["chain"]["seq"] <= alert["chain"]["seq"]]
        (going_on / path.name).write_text("".join(line + "\n" for line in kept))
    made = fairstream("incident", str(going_on), "--alert", alert["alert_id"], "--out", str(tmp_path / "x.zip"))
    assert made.returncode == 1 and made.stderr.count("\n") == 1 and "is not vouched for by a seal yet" in made.stderr, made.stderr
    assert not (tmp_path / "x.zip").exists()


def test_wrong_requests_are_one_line_each(run_dir, alert, tmp_path):
    unknown = fairstream("incident", str(run_dir), "--alert", "0" * 24, "--out", str(tmp_path / "x.zip"))
    assert unknown.returncode == 1 and unknown.stderr == f"error: no alert {'0' * 24} in the run's records\n"
    other = tmp_path / "other.yaml"
    other.write_text(SPEC.read_text() + "\n")
    wrong = fairstream("incident", str(run_dir), "--alert", alert["alert_id"], "--out", str(tmp_path / "x.zip"), "--spec", str(other))
    assert wrong.returncode == 1 and "is not the spec of alert" in wrong.stderr and wrong.stderr.count("\n") == 1
    broken = shutil.copytree(run_dir, tmp_path / "broken")
    _change_a_rate(broken)
    refused = fairstream("incident", str(broken), "--alert", alert["alert_id"], "--out", str(tmp_path / "x.zip"))
    assert refused.returncode == 1 and "the run's records do not verify" in refused.stderr, refused.stderr
