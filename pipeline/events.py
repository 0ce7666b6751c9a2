"""The records that flow between steps: validated events and dead letters."""

from __future__ import annotations

from typing import Any, NamedTuple


class Event(NamedTuple):
    """One validated decision-system event: its dependence key, event time (epoch seconds), kind and fields."""

    key: str
    time: int
    kind: str
    fields: dict[str, Any]


class DeadLetter(NamedTuple):
    """A record the pipeline could not use, with the reason; it is written out and counted, never dropped."""

    reason: str
    detail: str
    record: str
    partition: int
    offset: int

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "pipeline.dead_letter",
            "reason": self.reason,
            "detail": self.detail,
            "record": self.record,
            "partition": self.partition,
            "offset": self.offset,
        }


class RawRecord(NamedTuple):
    """What a source yields: the input partition, the position in it, and the payload (JSON text or a dict)."""

    partition: int
    offset: int
    payload: Any
