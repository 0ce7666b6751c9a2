"""The shield's step over one decision stream, as the dataflow and the HTTP server both run it: events ordered, decisions
shielded, and every record but the shielded decisions linked in one hash chain (pure, given the clock's readings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairstream.language.models import ShieldSpec, Spec
from fairstream.records.chain import RecordChain
from fairstream.records.envelope import SHIELDED
from fairstream.records.events import DeadLetter, Event
from fairstream.records.redact import LetterRecord
from fairstream.shields.runtime.decisions import ShieldRun
from fairstream.shields.runtime.order import EventOrder, Released


def answered_kinds(shield: ShieldSpec) -> frozenset[str]:
    """The kinds the shield acts on whenever they arrive: decisions, and the labels equal opportunity counts by."""
    return frozenset(kind for kind in (shield.decisions, shield.labels) if kind is not None)


@dataclass
class ShieldStep:
    """Orders events (`EventOrder`), shields decisions (`ShieldRun`) and chains the records (`RecordChain`); the shielded
    decisions, the decision maker's own records, stay outside the chain."""

    order: EventOrder
    run: ShieldRun
    chain: RecordChain

    @classmethod
    def start(cls, spec: Spec, spec_sha256: str, letter_record: LetterRecord, *, partitions: int = 1, answer_within: int | None = None) -> ShieldStep:
        """The step of `spec`'s shield at the start of a stream of `partitions` input partitions; `answer_within`: ms a
        decision waits for the order (None: as long as it takes)."""
        shield = spec.shield
        assert shield is not None
        order = EventOrder(
            partitions, spec.input.lateness, spec.input.max_future, spec.input.max_ahead, letter_record, answered=answered_kinds(shield), answer_within=answer_within
        )
        return cls(order, ShieldRun(shield, spec.monitor, spec_sha256), RecordChain(f"shield/{spec.monitor}", spec_sha256))

    def take(self, partition: int, events: list[Event], dead: list[DeadLetter], idle: bool) -> list[dict[str, Any]]:
        """A partition's parsed batch: its dead letters, and the records of the events it releases."""
        released, letters = self.order.receive(partition, events, dead, idle)
        return self._chained([letter.to_json() for letter in letters]) + self._decide(released)

    def next_deadline(self) -> int | None:
        """When (ms of the wall clock) the earliest held decision is due to be answered, or None."""
        return self.order.next_deadline()

    def due(self, now: int) -> list[dict[str, Any]]:
        """The records of the decisions due by `now` (ms of the wall clock), and of the events ordered before them."""
        return self._decide(self.order.release_due(now))

    def finish(self) -> list[dict[str, Any]]:
        """The input ended: every held event's records, the closing status and the chain's closing seal."""
        return [*self._decide(self.order.finish()), *self._chained(self.run.closing()), self.chain.seal(final=True)]

    def _decide(self, released: list[Released]) -> list[dict[str, Any]]:
        return self._chained([record for event, arrival in released for record in self.run.receive(event, arrival)])

    def _chained(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Link every record but the shielded decisions, with the checkpoint seals where they are due."""
        linked = []
        for record in records:
            if record["type"] != SHIELDED:
                checkpoint = self.chain.checkpoint()
                if checkpoint is not None:
                    linked.append(checkpoint)
                self.chain.link(record)
            linked.append(record)
        return linked
