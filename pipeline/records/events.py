"""The records that flow between steps: validated events and dead letters."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, overload

IDLE = -2
"""The offset of a marker record a source sends when its partition has been at the end of its log for a while."""

ENDED = -3
"""The offset of a marker record a source sends as its partition ends while others may go on."""


class RawRecord(NamedTuple):
    """What a source yields: the input partition, the position in it, and the payload (JSON text or a dict); `topic`
    names the topic it was read from where a partition reads several (co-partitioned) topics, else it is empty."""

    partition: int
    offset: int
    payload: Any
    topic: str = ""


def split_lines(text: bytes) -> list[bytes]:
    """The lines of whole-line text (each ending in a newline), without their line endings (CR LF as well)."""
    lines = text.split(b"\n")
    del lines[-1]  # after the last line ending
    return [line.rstrip(b"\r") for line in lines] if b"\r" in text else lines


class LineBlock(Sequence[RawRecord]):
    """Consecutive JSON records of one input partition read as one batch: their text, each record a line ending in a
    newline, and their offsets. A parser that knows blocks decodes the text at once (`reading.typed`); anything else sees
    the `RawRecord` of each line (as `jsonl_lines` or the Kafka source gives it, without its line ending)."""

    __slots__ = ("partition", "offsets", "text", "times", "_lines")

    def __init__(self, partition: int, start: int, text: bytes, times: list[int] | None = None):
        """Lines of a file from its line `start` on (with their event times where they were read already)."""
        self.partition = partition
        self.text = text
        self.offsets: Sequence[int] = range(start, start + (text.count(b"\n") if times is None else len(times)))
        """Each record's offset (a file's line number), in order."""
        self.times = times
        """Each line's event time as the spec's time format reads it, where a check of the file's order read them (so in
        order)."""
        self._lines: list[bytes] | None = None

    @classmethod
    def of_records(cls, partition: int, offsets: list[int], payloads: list[bytes]) -> LineBlock | None:
        """Messages of a topic partition as a block; None where one holds a line ending (or is not bytes) and so
        cannot be a line of one."""
        try:
            text = b"\n".join(payloads) + b"\n"
        except TypeError:  # a message without a value
            return None
        if text.count(b"\n") != len(payloads):
            return None
        block = cls.__new__(cls)
        block.partition, block.text, block.offsets, block.times, block._lines = partition, text, offsets, None, payloads
        return block

    @property
    def lines(self) -> list[bytes]:
        """Each line's bytes, without its line ending."""
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def __len__(self) -> int:
        return len(self.offsets)

    @overload
    def __getitem__(self, index: int) -> RawRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[RawRecord]: ...
    def __getitem__(self, index: int | slice) -> RawRecord | list[RawRecord]:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(len(self)))]
        return RawRecord(self.partition, self.offsets[index], self.lines[index])

    def __iter__(self) -> Iterator[RawRecord]:
        partition = self.partition
        return (RawRecord(partition, offset, line) for offset, line in zip(self.offsets, self.lines))


class Unreadable(NamedTuple):
    """A raw record its reader could not turn into fields (a CSV row with an unbalanced quote, a line that is not
    UTF-8): the parser dead-letters it with this reason and detail, keeping its bytes."""

    reason: str
    detail: str
    text: bytes


class Event(NamedTuple):
    """One validated decision-system event: its dependence key, event time (epoch milliseconds), kind and fields.

    `origin` is the raw record it was read from, kept so that a late event is dead-lettered as it arrived.
    """

    key: str
    time: int
    kind: str
    fields: dict[str, Any]
    origin: RawRecord | None = None


class DeadLetter(NamedTuple):
    """A record the pipeline could not use, with the reason; it is written out and counted, never dropped.

    `count` is the running number of dead letters of its input partition, this one included; `topic` names the record's
    topic where a partition reads several.
    """

    reason: str
    detail: str
    record: str
    partition: int
    offset: int
    count: int = 0
    topic: str = ""
    chain: dict[str, Any] | None = None
    """Its link in the partition's chain of dead letters (see `records.chain`), once it has been numbered."""

    @property
    def letter_id(self) -> str:
        """A deterministic id from the record's input position and the reason: a replay after a crash repeats it, so consumers can de-duplicate."""
        position = f"{self.partition}\x1f{self.offset}" if not self.topic else f"{self.topic}\x1f{self.partition}\x1f{self.offset}"
        text = f"pipeline.dead_letter\x1f{position}\x1f{self.reason}"
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def to_json(self) -> dict[str, Any]:
        record = {
            "alert_id": self.letter_id,
            "type": "pipeline.dead_letter",
            "reason": self.reason,
            "detail": self.detail,
            "record": self.record,
            "partition": self.partition,
            "offset": self.offset,
            "count": self.count,
        }
        if self.topic:
            record["topic"] = self.topic
        if self.chain is not None:
            record["chain"] = self.chain
        return record


class Sealed(NamedTuple):
    """A seal of a partition's chain of dead letters (see `records.chain`): it travels with the dead letters."""

    record: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.record
