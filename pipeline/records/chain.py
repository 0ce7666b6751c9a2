"""A tamper-evident record: each writer's records form a hash chain (pure).

A writer is one stream of records in the order it writes them: a monitor's merge (its estimates and alerts), an input
partition's dead letters, a shield. Every record it writes carries `chain` = {`writer`, `seq` (0, 1, …), `prev` (the
previous record's hash; zeros for the first), `spec` (the sha256 of the spec it was produced under), `hash`}. The hash
is the sha256 of the record's canonical JSON without `emitted_at` (the one field a replay changes) and without
`chain.hash` itself: so it covers the body, the position and the predecessor, and changing any published number, or
removing or reordering a record, breaks the chain where it happened. A record written again after a crash and resume
is the same record (same position, same hash): a duplicate, not a break. Where the job has a signing key, `chain.sig`
is the Ed25519 signature of the hash (see `records.signing`).

A chain is sealed: a `pipeline.seal` record closes it when its writer's input ends (`final: true`), stating the number
of records before it and the last one's hash, so a cut from its end is caught; while a run goes on, a checkpoint seal
(`final: false`) takes every `CHECKPOINT_EVERY`-th place, so a cut is caught up to the last checkpoint. Seals are
links of the chain like any record (signed alike); where they fall depends on the records alone, never on timing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from fairstream import __version__
from fairstream.records import notices, wire  # noqa: F401  (notices: the alerts' Structs join wire.check)
from fairstream.records.envelope import SEAL
from fairstream.records.signing import signature

GENESIS = "0" * 64
"""The `prev` of a writer's first record."""

CHECKPOINT_EVERY = 100
"""A checkpoint seal takes the places 99, 199, … of a chain (when a record follows it)."""


def record_hash(record: dict[str, Any]) -> str:
    """The sha256 a record's chain states: its canonical JSON (keys sorted) without `emitted_at` and `chain.hash`."""
    body = {name: value for name, value in record.items() if name != "emitted_at"}
    chain = body.get("chain")
    if isinstance(chain, dict):
        body["chain"] = {name: value for name, value in chain.items() if name not in ("hash", "sig")}
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def spec_hash(text: bytes) -> str:
    """The sha256 of a spec file's bytes, as `sha256sum` prints it."""
    return hashlib.sha256(text).hexdigest()


def combined_hash(hashes: list[str]) -> str:
    """The spec hash of records several specs share (a job's dead letters): the one hash, or the sha256 of the
    distinct hashes joined by commas, in job order."""
    distinct = list(dict.fromkeys(hashes))
    return distinct[0] if len(distinct) == 1 else hashlib.sha256(",".join(distinct).encode()).hexdigest()


@dataclass
class RecordChain:
    """One writer's position in its chain: the next sequence number and the last record's hash (kept in snapshots)."""

    writer: str
    spec: str
    seq: int = 0
    prev: str = GENESIS

    def link(self, record: dict[str, Any]) -> dict[str, Any]:
        """Give `record` (in place) its place in the chain and its hash; return it."""
        record["chain"] = {"writer": self.writer, "seq": self.seq, "prev": self.prev, "spec": self.spec, "version": __version__}
        digest = record_hash(record)
        record["chain"]["hash"] = digest
        sig = signature(digest)
        if sig is not None:
            record["chain"]["sig"] = sig
        self.seq += 1
        self.prev = digest
        return wire.check(record)

    def checkpoint(self) -> dict[str, Any] | None:
        """The checkpoint seal due at this place, linked; None when the next record takes it."""
        return self.seal(final=False) if self.seq % CHECKPOINT_EVERY == CHECKPOINT_EVERY - 1 else None

    def link_all(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Link each record (in place), checkpoint seals where they are due; return the records and seals in order."""
        linked = []
        for record in records:
            checkpoint = self.checkpoint()
            if checkpoint is not None:
                linked.append(checkpoint)
            linked.append(self.link(record))
        return linked

    def seal(self, *, final: bool) -> dict[str, Any]:
        """A seal of the chain so far (`final`: its writer's input has ended), linked as its next record."""
        alert_id = hashlib.sha256(f"{SEAL}\x1f{self.writer}\x1f{self.seq}".encode()).hexdigest()[:24]
        return self.link({"alert_id": alert_id, "type": SEAL, "writer": self.writer, "final": final, "records": self.seq, "last": self.prev})
