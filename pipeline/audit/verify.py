"""Walk the hash chains of a run's records and name the first broken link (pure; see `records.chain`).

Each record's content must match its hash and sit where records of its type are written; each writer's records must
run 0, 1, 2, … with each `prev` the hash of the one before and one spec hash throughout, in that order within each
file or topic partition, and end with the writer's closing seal. A record met again with the same position and hash
is a duplicate (at-least-once delivery, a resumed run), not a break; two different records at one position, a missing
position, a record out of order or out of place, a record after the closing seal, a chain without one, a record
without a chain and a changed record are breaks. `emitted_at`, the wall-clock time a record was written, is outside
the hashes: a replay changes it. `pipeline.undelivered` notices (alerts a notification endpoint never accepted, on the
dead-letter topic) are counted apart: they are outside the chains.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from fairstream.records.chain import GENESIS, record_hash
from fairstream.records.envelope import SEAL, UNDELIVERED
from fairstream.records.segments import RETENTION, Span, Statement
from fairstream.records.signing import signed_by


class Located(NamedTuple):
    """A record and where it was read: a file and line, or a topic, partition and offset; `home` is where a record of
    its type is written (None where its type does not say)."""

    source: str
    position: int
    record: dict[str, Any]
    partition: int = -1
    home: str | None = None
    cut_short: bool = False
    """The file's last line, without its line end and not a whole record: its writer stopped mid-line."""

    def where(self) -> str:
        return f"{self.source} line {self.position}" if self.partition < 0 else f"{self.source} partition {self.partition} offset {self.position}"

    def stream(self) -> str:
        """The file, or topic partition, whose order the records of one writer keep."""
        return self.source if self.partition < 0 else f"{self.source} partition {self.partition}"


@dataclass
class ChainCheck:
    """What a walk of the chains found: records checked per writer, duplicates, the breaks in reading order, and the
    chains left open (no closing seal: a run that goes on), each with the place of its last checkpoint."""

    checked: Counter = field(default_factory=Counter)
    duplicates: int = 0
    breaks: list[str] = field(default_factory=list)
    open: dict[str, tuple[int, int]] = field(default_factory=dict)
    """writer → (its last checkpoint's place, or -1; its last record's place)."""
    notices: int = 0
    """`pipeline.undelivered` records met (beside the dead letters, outside the chains)."""
    removed: int = 0
    """Records a retention removed, as its statements say (their places and bordering hashes are checked)."""
    statements: int = 0
    cut_short: list[str] = field(default_factory=list)
    """Checking a run that goes on (or stopped): the files whose last line its writer had not finished."""

    @property
    def intact(self) -> bool:
        return not self.breaks and bool(self.checked)

    def summary(self) -> str:
        writers = ", ".join(f"{writer}: {count:,}" for writer, count in sorted(self.checked.items()))
        duplicated = f"; {self.duplicates:,} duplicate(s) of records already seen (re-sent, same hash)" if self.duplicates else ""
        duplicated += f"; {self.notices:,} undelivered-notification notice(s), outside the chains" if self.notices else ""
        duplicated += f"; {self.removed:,} record(s) removed by the run's retention, linked through {self.statements:,} statement(s)" if self.statements else ""
        duplicated += "".join(
            f"; the last line of {where} is cut short, a write its run had not finished (a crash or a full disk): a resume from the same --recovery cuts it and writes it again"
            for where in self.cut_short
        )
        sealed = len(self.checked) - len(self.open)
        opened = "".join(
            f"; {writer} is open, vouched for through #{checkpoint} ({last - checkpoint:,} record(s) after it could still be cut unseen)"
            if checkpoint >= 0
            else f"; {writer} is open with no checkpoint yet ({last + 1:,} record(s) could still be cut unseen)"
            for writer, (checkpoint, last) in sorted(self.open.items())
        )
        return (
            f"verified {sum(self.checked.values()):,} record(s) in {len(self.checked)} chain(s) ({writers}), {sealed} closed by its seal{duplicated}{opened}; "
            "emitted_at (when a record was written) is outside the hashes"
        )


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


class _Walk:
    """The state of one walk: every writer's places, the last place per writer and stream, and the seals met."""

    def __init__(self, public_key: Any, open_chains: bool, cut: dict[str, int]):
        self.public_key = public_key
        self.open_chains = open_chains
        self.cut = cut
        self.removed: dict[str, list[Span]] = {}
        self.check = ChainCheck()
        self.seen: dict[str, dict[int, _Link]] = {}
        self.last_in: dict[tuple[str, str], int] = {}
        self.final: dict[str, int] = {}
        self.checkpoints: dict[str, int] = {}

    def take(self, found: Located) -> None:
        breaks = self.check.breaks
        record, chain = found.record, found.record.get("chain")
        if found.cut_short and self.open_chains:
            self.check.cut_short.append(found.source)
            return
        if found.cut_short:
            breaks.append(
                f"{found.where()} is cut short: its writer stopped mid-line (a crash or a full disk); a run that goes on or "
                "stopped is checked with --open, and a resume from its --recovery writes the line again whole"
            )
            return
        if record.get("type") == UNDELIVERED and chain is None:  # an operational notice beside the dead letters, outside the chains
            self.check.notices += 1
            return
        if record.get("type") == RETENTION and chain is None:  # a removed segment's statement: its spans stand for its records
            self._statement(found)
            return
        if not isinstance(chain, dict) or not {"writer", "seq", "prev", "spec", "hash"} <= chain.keys():
            breaks.append(f"{found.where()}: record {record.get('alert_id', '?')} carries no chain (written by another program, or edited)")
            return
        if record_hash(record) != chain["hash"]:
            breaks.append(f"{_name(found)} was changed after it was written: its content does not match its hash")
            return
        if self.public_key is not None and not (chain.get("sig") and signed_by(self.public_key, chain["hash"], chain["sig"])):
            breaks.append(f"{_name(found)} is not signed by the given key")
            return
        if found.home is not None and found.home != found.source:
            breaks.append(f"{_name(found)} is a {record.get('type')} record, which is written to {found.home}, not {found.source}")
        writer, seq = chain["writer"], chain["seq"]
        positions = self.seen.setdefault(writer, {})
        first = positions.get(seq)
        if first is None:
            positions[seq] = _Link(_name(found), found.where(), chain["hash"], chain["prev"], chain["spec"])
        elif first.hash == chain["hash"]:
            self.check.duplicates += 1
        else:
            breaks.append(f"{_name(found)} differs from the record at the same place in the chain, {first.where}")
        stream = (found.stream(), writer)
        before = self.last_in.get(stream)
        if first is None and before is not None and seq < before:
            breaks.append(f"{_name(found)} comes after #{before} in {found.stream()}: records out of order (moved or swapped)")
        self.last_in[stream] = seq
        if record.get("type") == SEAL:
            self._seal(found, writer, seq)

    def _statement(self, found: Located) -> None:
        try:
            statement = Statement.model_validate(found.record)
        except ValueError:
            self.check.breaks.append(f"{found.where()}: a retention statement that does not say what it removed")
            return
        self.check.statements += 1
        self.check.removed += statement.records
        for writer, spans in statement.spans.items():
            self.removed.setdefault(writer, []).extend(spans)
            for span in spans:
                if span.closing_seal:
                    self.final[writer] = span.last

    def _seal(self, found: Located, writer: str, seq: int) -> None:
        record = found.record
        if record.get("records") != seq or record.get("last") != record["chain"]["prev"] or record.get("writer") != writer:
            self.check.breaks.append(f"{_name(found)} is a seal that does not state its own place in the chain")
        elif record.get("final") is True:
            self.final[writer] = seq
        else:
            self.checkpoints[writer] = max(seq, self.checkpoints.get(writer, -1))

    def finish(self, open_chains: bool) -> ChainCheck:
        check = self.check
        for writer in sorted(self.seen.keys() | self.removed.keys()):
            positions, spans = self.seen.get(writer, {}), sorted(self.removed.get(writer, []), key=lambda span: span.first)
            check.breaks.extend(_sequence_breaks(writer, positions, spans))
            check.checked[writer] = len(positions)
            last = max([*positions, *(span.last for span in spans)])
            final = self.final.get(writer)
            name = positions[last].name if last in positions else f"{writer} #{last}"
            if final is not None and last > final:
                check.breaks.append(f"{name} comes after the chain's closing seal, #{final} (added after it was written)")
            elif final is None and writer in self.cut:
                if last != self.cut[writer] or self.checkpoints.get(writer) != last:
                    check.breaks.append(f"{writer}: the chain is to end at its seal #{self.cut[writer]}, but its last record is #{last}")
            elif final is None and open_chains:
                check.open[writer] = (self.checkpoints.get(writer, -1), last)
            elif final is None:
                check.breaks.append(
                    f"{writer}: no closing seal after #{last}: records were cut from its end, or its run has not ended "
                    "(--open checks a run that goes on, up to its last checkpoint)"
                )
        return check


def verify_chains(records: Iterable[Located], public_key: Any = None, *, open_chains: bool = False, cut: dict[str, int] | None = None) -> ChainCheck:
    """Check every record's hash, place and stream order, every writer's sequence and seal, and with `public_key`
    (Ed25519) every record's signature; breaks are listed in the order the records were read. `open_chains`: a chain
    without its closing seal (a run that goes on) is vouched for up to its last checkpoint, not a break. `cut`: writer →
    the checkpoint seal its chain is cut at (an incident bundle), which then closes it as a closing seal would."""
    walk = _Walk(public_key, open_chains, cut or {})
    for found in records:
        walk.take(found)
    return walk.finish(open_chains)


def _sequence_breaks(writer: str, positions: dict[int, _Link], spans: list[Span]) -> list[str]:
    """A writer's records must run 0, 1, 2, … each naming its predecessor's hash, under one spec; a span a retention
    removed stands for its records, linked by the hash before it and the hash of its last record."""
    breaks = []
    expected_prev, spec = GENESIS, None
    last = max([*positions, *(span.last for span in spans)])
    removed = {span.first: span for span in spans}
    seq = 0
    while seq <= last:
        span = removed.get(seq)
        if span is not None and seq not in positions:
            if expected_prev is not None and span.prev != expected_prev:
                breaks.append(f"{writer}: the records #{span.first}–#{span.last} a retention removed do not follow #{seq - 1} (a statement or a record was changed)")
            expected_prev, seq = span.hash, span.last + 1
            continue
        link = positions.get(seq)
        if link is None:
            breaks.append(f"{writer}: record #{seq} is missing (removed after it was written), though #{last} is there")
            expected_prev = None
            seq += 1
            continue
        if expected_prev is not None and link.prev != expected_prev:
            breaks.append(f"{link.name} does not follow #{seq - 1}: its prev is not the hash of #{seq - 1} (one of them was changed, replaced or reordered)")
        if spec is not None and link.spec != spec:
            breaks.append(f"{link.name} names spec {link.spec[:12]}…, the records before it {spec[:12]}…")
        spec = spec or link.spec
        expected_prev = link.hash
        seq += 1
    return breaks
