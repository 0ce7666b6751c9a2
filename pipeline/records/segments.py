"""Where an output file's rotated segments live, and the statement that replaces a removed one (pure).

A segment removed by retention leaves, per writer, the ranges of chain positions it held with the hash before each
range and the hash of its last record: `verify` links the records kept on either side through them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from fairstream.records.envelope import SEAL

SEGMENTS = "segments"
"""The folder of an output directory that holds the rotated segments."""
RETENTION = "pipeline.retention"
"""The type of a statement (outside the chains, like an undelivered-notification notice)."""
STATEMENTS = "removed.jsonl"
"""The file beside the output files that collects the statements, one line each, never cut."""


class Span(BaseModel):
    """Consecutive chain positions of one writer held by a removed segment."""

    model_config = ConfigDict(frozen=True)

    first: int
    last: int
    prev: str
    """The `prev` of the span's first record: the hash of the record before it."""
    hash: str
    """The hash of the span's last record: the `prev` of the record after it."""
    closing_seal: bool = False
    """The span ends with the writer's closing seal."""


class Statement(BaseModel):
    """What a removed segment held: its file, number, records and each writer's spans."""

    model_config = ConfigDict(frozen=True)

    type: Literal["pipeline.retention"] = RETENTION
    file: str
    segment: int
    records: int
    retention_s: int
    removed_at: str
    last_written_at: str
    spans: dict[str, list[Span]]


def segment_path(out_dir: Path, name: str, number: int) -> Path:
    """Segment `number` of output file `name`: `segments/<stem>.<number>.jsonl`."""
    return out_dir / SEGMENTS / f"{Path(name).stem}.{number:06d}.jsonl"


def segments_of(out_dir: Path, name: str) -> list[tuple[int, Path]]:
    """The rotated segments of output file `name` still on disk, oldest first."""
    stem = Path(name).stem
    found = []
    for path in (out_dir / SEGMENTS).glob(f"{stem}.*.jsonl"):
        number = path.name[len(stem) + 1 : -len(".jsonl")]
        if number.isdigit():
            found.append((int(number), path))
    return sorted(found)


def spans(records: Iterable[dict[str, Any]]) -> dict[str, list[Span]]:
    """Each writer's runs of consecutive positions among `records`, in file order: one pass, constant work a record. A
    writer's records lie in a file in rising order, so a place at or before its latest one is a repeat (a resume) and
    is skipped."""
    runs: dict[str, list[list[Any]]] = {}  # writer → [first, last, prev, hash, closing_seal] per run
    for record in records:
        chain = record.get("chain")
        if not isinstance(chain, dict):
            continue
        writer, seq = chain["writer"], chain["seq"]
        closing = record.get("type") == SEAL and record.get("final") is True
        found = runs.setdefault(writer, [])
        if found and seq <= found[-1][1]:
            continue
        if found and found[-1][1] + 1 == seq:
            found[-1][1:] = [seq, found[-1][2], chain["hash"], closing]
        else:
            found.append([seq, seq, chain["prev"], chain["hash"], closing])
    return {writer: [Span(first=a, last=b, prev=prev, hash=last, closing_seal=closing) for a, b, prev, last, closing in found] for writer, found in runs.items()}
