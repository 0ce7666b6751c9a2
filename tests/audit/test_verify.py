"""`fairstream verify` on a real run's output: an untouched run verifies; one changed digit, a removed record, a record
whose hash was recomputed after a change, and a foreign record are each named; a duplicated record is not a break;
records signed with a key verify with its public key and with no other."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairstream.records.chain import GENESIS, record_hash
from fairstream.runner import run_file
from tests.conftest import SPECS


@pytest.fixture(scope="module")
def run_dir(compas_csv, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("chained")
    run_file(SPECS / "compas_equalized_odds.yaml", compas_csv, out)
    return out


def verify(directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", "verify", str(directory)], capture_output=True, text=True, timeout=120)


def copy_run(source: Path, target: Path, change=None) -> Path:
    """The run's files in `target`, the estimates passed through `change` (a list of lines → a list of lines)."""
    target.mkdir()
    for path in source.glob("*.jsonl"):
        lines = path.read_text().splitlines()
        if change is not None and path.name == "estimates.jsonl":
            lines = change(lines)
        (target / path.name).write_text("".join(line + "\n" for line in lines))
    return target


def test_every_record_links_to_the_one_before_under_the_specs_hash(run_dir):
    records = [orjson.loads(line) for name in ("alerts.jsonl", "estimates.jsonl", "seals.jsonl") for line in (run_dir / name).read_bytes().splitlines()]
    chain = sorted((record["chain"] for record in records), key=lambda link: link["seq"])
    assert [link["seq"] for link in chain] == list(range(len(records)))
    assert [link["prev"] for link in chain] == [GENESIS] + [link["hash"] for link in chain[:-1]]
    spec_digest = subprocess.run(["sha256sum", str(SPECS / "compas_equalized_odds.yaml")], capture_output=True, text=True).stdout.split()[0]
    assert {link["spec"] for link in chain} == {spec_digest}


def test_an_untouched_run_verifies(run_dir):
    result = verify(run_dir)
    count = sum(1 for name in ("alerts.jsonl", "estimates.jsonl", "seals.jsonl") for _ in (run_dir / name).open())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f"verified {count:,} record(s) in 1 chain(s) (monitor/compas-equalized-odds: {count:,}), 1 closed by its seal; "
        "emitted_at (when a record was written) is outside the hashes"
    )


def change_a_digit(lines: list[str]) -> list[str]:
    line = lines[100]
    at = re.search(r'"estimate":0\.\d', line).end() - 1
    lines[100] = line[:at] + str((int(line[at]) + 1) % 10) + line[at + 1 :]
    return lines


def test_one_changed_digit_of_one_estimate_is_named(run_dir, tmp_path):
    changed = copy_run(run_dir, tmp_path / "changed", change_a_digit)
    alert_id = orjson.loads((run_dir / "estimates.jsonl").read_text().splitlines()[100])["alert_id"]
    result = verify(changed)
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: estimates.jsonl line 101: record {alert_id} (monitor/compas-equalized-odds #")
    assert "was changed after it was written" in result.stderr


def test_a_change_whose_hash_was_recomputed_breaks_the_next_link(run_dir, tmp_path):
    def forge(lines):
        record = orjson.loads(change_a_digit(lines)[100])
        record["chain"]["hash"] = record_hash(record)
        lines[100] = orjson.dumps(record).decode()
        return lines

    seq = orjson.loads((run_dir / "estimates.jsonl").read_text().splitlines()[100])["chain"]["seq"]
    result = verify(copy_run(run_dir, tmp_path / "forged", forge))
    assert result.returncode == 1
    assert f"#{seq + 1}) does not follow #{seq}" in result.stderr


def test_a_removed_record_is_named_by_its_place(run_dir, tmp_path):
    seq = orjson.loads((run_dir / "estimates.jsonl").read_text().splitlines()[5])["chain"]["seq"]
    result = verify(copy_run(run_dir, tmp_path / "removed", lambda lines: lines[:5] + lines[6:]))
    assert result.returncode == 1
    assert f"monitor/compas-equalized-odds: record #{seq} is missing" in result.stderr


def test_a_duplicated_record_is_a_duplicate_and_a_foreign_one_a_break(run_dir, tmp_path):
    result = verify(copy_run(run_dir, tmp_path / "duplicated", lambda lines: lines + lines[:3]))
    assert result.returncode == 0 and "3 duplicate(s)" in result.stdout
    foreign = '{"alert_id": "feed", "type": "fairness.estimate"}'
    result = verify(copy_run(run_dir, tmp_path / "foreign", lambda lines: [*lines, foreign]))
    assert result.returncode == 1 and "record feed carries no chain" in result.stderr


def write_key(path: Path) -> Ed25519PrivateKey:
    key = Ed25519PrivateKey.generate()
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    path.with_suffix(".pub").write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return key


def signed_run(compas_csv: Path, out: Path, key: Path) -> None:
    """COMPAS monitored into `out`, every record signed with `key`."""
    run = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--input", str(compas_csv), "--out", str(out), "--signing-key", str(key)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr


def test_signed_records_verify_with_their_key_and_no_other(compas_csv, tmp_path):
    key, other = write_key(tmp_path / "key.pem"), write_key(tmp_path / "other.pem")
    signed_run(compas_csv, tmp_path / "run", tmp_path / "key.pem")
    record = orjson.loads((tmp_path / "run" / "alerts.jsonl").read_bytes().splitlines()[0])
    key.public_key().verify(base64.b64decode(record["chain"]["sig"]), bytes.fromhex(record["chain"]["hash"]))  # raises when not signed by it
    with pytest.raises(InvalidSignature):
        other.public_key().verify(base64.b64decode(record["chain"]["sig"]), bytes.fromhex(record["chain"]["hash"]))

    def verify_with(public: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "fairstream.cli", "verify", str(tmp_path / "run"), "--public-key", str(tmp_path / public)], capture_output=True, text=True, timeout=120
        )

    assert verify_with("key.pub").returncode == 0
    refused = verify_with("other.pub")
    assert refused.returncode == 1 and "is not signed by the given key" in refused.stderr


def test_a_line_cut_short_by_a_crash_is_named_as_such(run_dir, tmp_path):
    """The run as a crash leaves it: every file holds the records written before one estimate, and that estimate's line
    is cut mid-way."""
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    lines = {path.name: path.read_bytes().splitlines(keepends=True) for path in run_dir.glob("*.jsonl")}
    estimates = lines["estimates.jsonl"]
    cut = orjson.loads(estimates[len(estimates) // 2])["chain"]["seq"]
    for name, kept in lines.items():
        before = [line for line in kept if orjson.loads(line)["chain"]["seq"] < cut]
        (crashed / name).write_bytes(b"".join(before) + (estimates[len(estimates) // 2][:200] if name == "estimates.jsonl" else b""))
    going_on = subprocess.run([sys.executable, "-m", "fairstream.cli", "verify", "--open", str(crashed)], capture_output=True, text=True, timeout=120)
    assert going_on.returncode == 0, going_on.stderr
    assert "the last line of estimates.jsonl is cut short, a write its run had not finished (a crash or a full disk)" in going_on.stdout
    assert "another program" not in going_on.stdout
    ended = verify(crashed)
    assert ended.returncode == 1
    assert f"estimates.jsonl line {len(estimates) // 2 + 1} is cut short: its writer stopped mid-line" in ended.stderr
