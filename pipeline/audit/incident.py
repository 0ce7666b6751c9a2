"""An incident bundle: one zip a third party checks on its own — the alert, every record of its chain up to the seal
that vouches for it, the spec, the figure, the versions — so `fairstream verify` passes on the unpacked bundle alone."""

from __future__ import annotations

import hashlib
import io
import platform
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict

from fairstream.audit.verify import ChainCheck, Located
from fairstream.connectors.files import file_of
from fairstream.records.envelope import SEAL
from fairstream.records.errors import InputError
from fairstream.records.segments import RETENTION, SEGMENTS, STATEMENTS

MANIFEST = "incident.json"
"""The bundle's manifest: what it holds and where its chain is cut; `fairstream verify` reads it."""
SUMS = "SHA256SUMS"
"""Each file's sha256 as `sha256sum -c` checks it."""
ZIP_TIME = (2000, 1, 1, 0, 0, 0)
"""Every entry's timestamp: the same run and alert give the same bundle, byte for byte."""
PACKAGES = ("fairstream", "bytewax", "confluent-kafka", "numpy", "scipy", "pydantic", "matplotlib")


class IncidentManifest(BaseModel):
    """What the bundle states; every claim but the versions is checked against the chained records by `verify`."""

    model_config = ConfigDict(frozen=True)

    alert_id: str
    monitor: str
    event_time: str
    status: str | None
    writer: str
    alert_seq: int
    alert_hash: str
    cut_seq: int
    """The seal that vouches for the alert: the writer's first seal at or after it (a checkpoint, or the closing seal)."""
    cut_hash: str
    spec_file: str
    spec_sha256: str
    files: dict[str, str]
    """Each record file of the bundle → its sha256."""
    versions: dict[str, str]
    run_verified: str
    """`verify`'s summary of the whole run when the bundle was made."""


@dataclass(frozen=True)
class Incident:
    """The alert and the records of its chain up to the vouching seal, in chain order."""

    alert: dict[str, Any]
    records: list[dict[str, Any]]
    seal: dict[str, Any]
    statements: list[dict[str, Any]]
    """The statements of the segments a retention removed that held records of the chain before the seal."""


def select(records: Iterable[Located], alert_id: str) -> Incident:
    """The alert named `alert_id` and its writer's records through the first seal at or after it (each position once)."""
    chains: dict[str, dict[int, dict[str, Any]]] = {}
    alert, statements = None, []
    for found in records:
        record, chain = found.record, found.record.get("chain")
        if record.get("type") == RETENTION:
            statements.append(record)
        if not isinstance(chain, dict) or "writer" not in chain:
            continue
        chains.setdefault(chain["writer"], {}).setdefault(chain["seq"], record)
        if record.get("alert_id") == alert_id and record.get("type") != SEAL:
            alert = record
    if alert is None:
        raise InputError(f"no alert {alert_id} in the run's records")
    writer, seq = alert["chain"]["writer"], alert["chain"]["seq"]
    positions = chains[writer]
    seals = sorted(place for place, record in positions.items() if place >= seq and record.get("type") == SEAL)
    if not seals:
        raise InputError(
            f"alert {alert_id} (#{seq} of {writer}) is not vouched for by a seal yet: the run's next checkpoint seals it "
            "(every 100 records and when the run ends); make the bundle then"
        )
    cut = seals[0]
    held = [statement for statement in statements if any(span["first"] <= cut for span in statement.get("spans", {}).get(writer, []))]
    return Incident(alert, [positions[place] for place in range(cut + 1) if place in positions], positions[cut], held)


def versions() -> dict[str, str]:
    """The Python and the installed versions of the packages a run's records depend on."""
    found = {"python": platform.python_version(), "platform": platform.platform(terse=True)}
    for package in PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return found


def record_files(incident: Incident) -> dict[str, bytes]:
    """The bundle's record files as a run writes them: each record in the file of its type, one JSON line, chain order."""
    files: dict[str, list[bytes]] = {}
    for record in incident.records:
        files.setdefault(file_of(record), []).append(orjson.dumps(record) + b"\n")
    for statement in incident.statements:  # what a retention removed before the alert, linking the chain across it
        files.setdefault(f"{SEGMENTS}/{STATEMENTS}", []).append(orjson.dumps(statement) + b"\n")
    return {name: b"".join(lines) for name, lines in sorted(files.items())}


def manifest_of(incident: Incident, files: dict[str, bytes], spec_name: str, spec: bytes, run_check: ChainCheck) -> IncidentManifest:
    """The manifest of a bundle holding `files` and the spec."""
    alert, seal = incident.alert, incident.seal
    return IncidentManifest(
        alert_id=alert["alert_id"],
        monitor=alert.get("monitor", "?"),
        event_time=alert.get("event_time", "?"),
        status=alert.get("status"),
        writer=alert["chain"]["writer"],
        alert_seq=alert["chain"]["seq"],
        alert_hash=alert["chain"]["hash"],
        cut_seq=seal["chain"]["seq"],
        cut_hash=seal["chain"]["hash"],
        spec_file=spec_name,
        spec_sha256=hashlib.sha256(spec).hexdigest(),
        files={name: hashlib.sha256(body).hexdigest() for name, body in files.items()},
        versions=versions(),
        run_verified=run_check.summary(),
    )


def figure(files: dict[str, bytes]) -> bytes:
    """The run's estimates and alerts up to the bundle's cut, drawn as `fairstream plot` draws a run."""
    from fairstream.report.plot import plot_run

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name, body in files.items():
            (folder / name).parent.mkdir(exist_ok=True)
            (folder / name).write_bytes(body)
        return plot_run(folder, folder / "fairness.png").read_bytes()


def spec_of(incident: Incident, given: Path | None, bundled: Path) -> tuple[str, bytes]:
    """The spec file the alert's records name (by its sha256): the one given, else a bundled spec with that hash."""
    wanted = incident.alert["chain"]["spec"]
    candidates = [given] if given is not None else sorted(bundled.glob("*.yaml"))
    for path in candidates:
        if path.is_file() and hashlib.sha256(text := path.read_bytes()).hexdigest() == wanted:
            return path.name, text
    if given is not None:
        raise InputError(f"{given} is not the spec of alert {incident.alert['alert_id']}: its records name a spec with sha256 {wanted}")
    raise InputError(f"no bundled spec has sha256 {wanted}, which the alert's records name: give the run's spec with --spec")


def entries(incident: Incident, spec: tuple[str, bytes], run_check: ChainCheck) -> dict[str, bytes]:
    """Every file of the bundle: the record files, the spec, the figure, the manifest and a note on how to check it."""
    files = record_files(incident)
    manifest = manifest_of(incident, files, spec[0], spec[1], run_check)
    how = (
        f"Incident bundle of alert {manifest.alert_id} ({manifest.monitor}, {manifest.event_time}).\n"
        "Check it on its own: `sha256sum -c SHA256SUMS`, then `fairstream verify .` in the unpacked folder.\n"
        f"{MANIFEST} states what it holds; {', '.join(files)} hold the records of the alert's chain up to seal "
        f"#{manifest.cut_seq}; {spec[0]} is the spec they name; fairness.png draws them.\n"
    )
    return {**files, spec[0]: spec[1], "fairness.png": figure(files), MANIFEST: manifest.model_dump_json(indent=2).encode(), "README.txt": how.encode()}


def write_bundle(out: Path, entries: dict[str, bytes]) -> None:
    """The zip of `entries` plus SHA256SUMS, every entry stamped alike (the same entries give the same bytes)."""
    sums = "".join(f"{hashlib.sha256(body).hexdigest()}  {name}\n" for name, body in sorted(entries.items()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, body in sorted({**entries, SUMS: sums.encode()}.items()):
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            bundle.writestr(info, body)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())


def read_manifest(folder: Path) -> IncidentManifest | None:
    """The manifest of an unpacked bundle; None for a run's own output directory."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        return IncidentManifest.model_validate_json(path.read_bytes())
    except ValueError as err:
        raise InputError(f"{path} is not an incident manifest: {str(err).splitlines()[0]}") from None


def bundle_breaks(folder: Path, manifest: IncidentManifest, records: Iterable[Located]) -> list[str]:
    """What an unpacked bundle holds that its manifest does not state: a record file changed, added or missing, another
    spec, or the alert (or the seal it is cut at) not the chained record the manifest names."""
    breaks = []
    present = {path.name for path in folder.glob("*.jsonl")}
    for name in sorted(present - manifest.files.keys()):
        breaks.append(f"{name} is in the bundle but not in its manifest (added after it was made)")
    for name, digest in sorted(manifest.files.items()):
        path = folder / name
        if not path.is_file():
            breaks.append(f"{name} is named by the manifest but missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            breaks.append(f"{name} is not the file the bundle was made with: its sha256 differs from the manifest's")
    spec = folder / manifest.spec_file
    if not spec.is_file() or hashlib.sha256(spec.read_bytes()).hexdigest() != manifest.spec_sha256:
        breaks.append(f"{manifest.spec_file} is missing or is not the spec the bundle was made with")
    chain = {found.record["chain"]["seq"]: found.record["chain"] for found in records
             if isinstance(found.record.get("chain"), dict) and found.record["chain"].get("writer") == manifest.writer}  # fmt: skip
    alert, seal = chain.get(manifest.alert_seq, {}), chain.get(manifest.cut_seq, {})
    if alert.get("hash") != manifest.alert_hash:
        breaks.append(f"alert {manifest.alert_id} is not record #{manifest.alert_seq} of {manifest.writer} with the manifest's hash")
    elif alert.get("spec") != manifest.spec_sha256:
        breaks.append(f"the alert's records name spec {str(alert.get('spec'))[:12]}…, the bundle's spec is {manifest.spec_sha256[:12]}…")
    if seal.get("hash") != manifest.cut_hash:
        breaks.append(f"the seal the manifest names, #{manifest.cut_seq} of {manifest.writer}, is not in the bundle")
    return breaks


def bundle_check(manifest: IncidentManifest) -> str:
    """The one line `verify` adds for a bundle whose chain checked: where it is cut and the alert it vouches for."""
    return (
        f"incident bundle of alert {manifest.alert_id} ({manifest.writer} #{manifest.alert_seq}, {manifest.event_time}): "
        f"its chain is cut at seal #{manifest.cut_seq}, which vouches for every record before it"
    )
