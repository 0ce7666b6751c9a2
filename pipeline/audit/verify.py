"""Walk the hash chains of a run's records and name the first broken link (pure; see `records.chain`).

Each record's content must match its hash; each writer's records must run 0, 1, 2, … with each `prev` the hash of the
one before and one spec hash throughout. A record met again with the same position and hash is a duplicate (at-least-once
delivery, a resumed run), not a break; two different records at one position, a missing position, a record without a
chain and a changed record are breaks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from fairstream.records.chain import GENESIS, record_hash
from fairstream.records.signing import signed_by


class Located(NamedTuple):
    """A record and where it was read: a file and line, or a topic and its place in the topic."""

    source: str
    position: int
    record: dict[str, Any]

    def where(self) -> str:
        return f"{self.source} line {self.position}" if self.source.endswith(".jsonl") else f"{self.source} record {self.position}"


@dataclass
class ChainCheck:
    """What a walk of the chains found: records checked per writer, duplicates, and the breaks in reading order."""

    checked: Counter = field(default_factory=Counter)
    duplicates: int = 0
    breaks: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.breaks and bool(self.checked)

    def summary(self) -> str:
        writers = ", ".join(f"{writer}: {count:,}" for writer, count in sorted(self.checked.items()))
        duplicated = f"; {self.duplicates:,} duplicate(s) of records already seen (re-sent, same hash)" if self.duplicates else ""
        return f"verified {sum(self.checked.values()):,} record(s) in {len(self.checked)} chain(s) ({writers}){duplicated}"


class _Link(NamedTuple):
    """What the sequence check keeps of a record (not the record: a long run's records need not fit in memory)."""

    name: str
    where: str
    hash: str
    prev: str
    spec: str


def _name(found: Located) -> str:
    record, chain = found.record, found.record.get("chain") or {}
    return f"{found.where()}: record {record.get('alert_id', '?')} ({chain.get('writer', '?')} #{chain.get('seq', '?')})"


def verify_chains(records: Iterable[Located], public_key: Any = None) -> ChainCheck:
    """Check every record's hash and every writer's sequence, and with `public_key` (Ed25519) every record's signature;
    breaks are listed in the order the records were read."""
    check = ChainCheck()
    seen: dict[str, dict[int, _Link]] = {}
    for found in records:
        chain = found.record.get("chain")
        if not isinstance(chain, dict) or not {"writer", "seq", "prev", "spec", "hash"} <= chain.keys():
            check.breaks.append(f"{found.where()}: record {found.record.get('alert_id', '?')} carries no chain (written by another program, or edited)")
            continue
        if record_hash(found.record) != chain["hash"]:
            check.breaks.append(f"{_name(found)} was changed after it was written: its content does not match its hash")
            continue
        if public_key is not None and not (chain.get("sig") and signed_by(public_key, chain["hash"], chain["sig"])):
            check.breaks.append(f"{_name(found)} is not signed by the given key")
            continue
        positions = seen.setdefault(chain["writer"], {})
        first = positions.get(chain["seq"])
        if first is None:
            positions[chain["seq"]] = _Link(_name(found), found.where(), chain["hash"], chain["prev"], chain["spec"])
        elif first.hash == chain["hash"]:
            check.duplicates += 1
        else:
            check.breaks.append(f"{_name(found)} differs from the record at the same place in the chain, {first.where}")
    for writer, positions in seen.items():
        check.breaks.extend(_sequence_breaks(writer, positions))
        check.checked[writer] = len(positions)
    return check


def _sequence_breaks(writer: str, positions: dict[int, _Link]) -> list[str]:
    """A writer's records must run 0, 1, 2, … each naming its predecessor's hash, under one spec."""
    breaks = []
    expected_prev, spec = GENESIS, None
    last = max(positions)
    for seq in range(last + 1):
        link = positions.get(seq)
        if link is None:
            breaks.append(f"{writer}: record #{seq} is missing (removed after it was written), though #{last} is there")
            expected_prev = None
            continue
        if expected_prev is not None and link.prev != expected_prev:
            breaks.append(f"{link.name} does not follow #{seq - 1}: its prev is not the hash of #{seq - 1} (one of them was changed, replaced or reordered)")
        if spec is not None and link.spec != spec:
            breaks.append(f"{link.name} names spec {link.spec[:12]}…, the records before it {spec[:12]}…")
        spec = spec or link.spec
        expected_prev = link.hash
    return breaks
