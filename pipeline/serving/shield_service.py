"""One served shield: each request's record parsed as the spec reads it, decided at once by the shield's step, and its
records written as `fairstream shield run` writes them (pure but for the writer and the clock).

The server answers in the order requests are read: a decision's deadline is its arrival (`answer_within` 0), so the
order is settled up to each decision when it is answered, and one dated behind it is answered marked `overtaken` (or
`late`, past the spec's lateness). Decisions in time order get the records a file of them gets from `shield run`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from fairstream import metrics
from fairstream.compiler.plan import Plan
from fairstream.records import wire
from fairstream.records.envelope import SHIELDED
from fairstream.records.events import DeadLetter, Event, RawRecord
from fairstream.serving.record_writers import RecordWriter
from fairstream.shields.runtime.step import ShieldStep
from fairstream.trials.clock import wall_clock

TOO_LARGE = "record_too_large"


@dataclass(frozen=True)
class Answer:
    """An HTTP status and its JSON body."""

    status: int
    body: bytes


@dataclass
class ShieldService:
    """The shield of one spec behind the server: its step, its parser, and the writer of its records."""

    plan: Plan
    writer: RecordWriter
    step: ShieldStep = field(init=False)
    received: int = 0
    """Requests whose record was read: the record's offset in the server's one input partition."""
    closed: bool = False
    unacknowledged: int = 0
    """Records the writer could not deliver by its close (Kafka)."""

    def __post_init__(self) -> None:
        self.step = ShieldStep.start(self.plan.spec, self.plan.sha256, self.plan.letter_record, answer_within=0)
        self._parse = self.plan.parser().parse

    @property
    def max_bytes(self) -> int:
        return self.plan.spec.input.max_record_bytes

    def answer(self, body: bytes) -> Answer:
        """The answer to one request's record: the shielded decision (200), an event of another kind taken (202), or why
        it is refused (400; 413 past `input.max_record_bytes`), its dead letter written."""
        self.received += 1
        parsed = self._parse(RawRecord(0, self.received, body))
        if type(parsed) is not Event:
            return self._refused(parsed)  # type: ignore[arg-type]
        records = self.step.take(0, [parsed], [], False) + self.step.due(wall_clock())
        self._write(records)
        shielded = [record for record in records if record["type"] == SHIELDED and record["id"] == parsed.key]
        if shielded:
            return Answer(200, wire.encode_decision(shielded[-1]))
        letters = [record for record in records if record["type"] == "pipeline.dead_letter" and record["offset"] == self.received]
        if letters:
            return _letter_answer(letters[-1])
        return Answer(202, orjson.dumps({"accepted": parsed.kind, "id": parsed.key}))

    def too_large(self, size: int, excerpt: bytes) -> Answer:
        """A request whose body is past `input.max_record_bytes`: refused unread, its dead letter keeping what was read."""
        self.received += 1
        detail = f"the record has {size:,} bytes or more; at most input.max_record_bytes = {self.max_bytes:,}"
        letter = DeadLetter(TOO_LARGE, detail, self.plan.letter_record(excerpt), 0, self.received)
        return self._refused(letter)

    def close(self) -> None:
        """The server stops: the closing status and the chain's closing seal written, the writer closed."""
        if not self.closed:
            self.closed = True
            self._write(self.step.finish())
            self.unacknowledged = self.writer.close()

    def _refused(self, letter: DeadLetter) -> Answer:
        records = self.step.take(0, [], [letter], False)
        self._write(records)
        return _letter_answer(next(record for record in records if record["type"] == "pipeline.dead_letter"))

    def _write(self, records: list[dict[str, Any]]) -> None:
        for record in records:
            metrics.observe(record)
        self.writer.write(records)


def _letter_answer(letter: dict[str, Any]) -> Answer:
    status = 413 if letter["reason"] == TOO_LARGE else 400
    return Answer(status, orjson.dumps({"reason": letter["reason"], "detail": letter["detail"], "alert_id": letter["alert_id"]}))
