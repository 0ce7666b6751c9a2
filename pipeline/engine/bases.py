"""The plain engine's sources, sinks and stateful steps: the same methods as bytewax's, so one connector or step serves
both engines."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

X = TypeVar("X")
S = TypeVar("S")


class StatefulLogic:
    """One key's state in a stateful step; each method returns the items to emit and whether to drop the state."""

    RETAIN = False
    DISCARD = True

    def on_item(self, value: Any) -> tuple[list[Any], bool]:
        raise NotImplementedError

    def on_notify(self) -> tuple[list[Any], bool]:
        return [], StatefulLogic.RETAIN

    def on_eof(self) -> tuple[list[Any], bool]:
        return [], StatefulLogic.RETAIN

    def notify_at(self) -> datetime | None:
        return None

    def snapshot(self) -> Any:
        raise NotImplementedError


class Source:
    """Anything a dataflow reads."""


class StatefulSourcePartition(Generic[X, S]):
    def next_batch(self) -> list[X]:
        raise NotImplementedError

    def next_awake(self) -> datetime | None:
        return None

    def snapshot(self) -> S:
        raise NotImplementedError

    def close(self) -> None:
        return None


class FixedPartitionedSource(Source, Generic[X, S]):
    """A source of named partitions, each read by one `StatefulSourcePartition`."""

    def list_parts(self) -> list[str]:
        raise NotImplementedError

    def build_part(self, step_id: str, for_part: str, resume_state: S | None) -> StatefulSourcePartition[X, S]:
        raise NotImplementedError


class Sink:
    """Anything a dataflow writes to."""


class StatefulSinkPartition(Generic[X, S]):
    def write_batch(self, values: list[X]) -> None:
        raise NotImplementedError

    def snapshot(self) -> S:
        raise NotImplementedError

    def close(self) -> None:
        return None


class FixedPartitionedSink(Sink, Generic[X, S]):
    """A sink of named partitions; a `(key, value)` item goes to partition `part_fn(key)` (wrapped) of `list_parts`."""

    def list_parts(self) -> list[str]:
        raise NotImplementedError

    def part_fn(self, item_key: str) -> int:
        raise NotImplementedError

    def build_part(self, step_id: str, for_part: str, resume_state: S | None) -> StatefulSinkPartition[X, S]:
        raise NotImplementedError


class StatelessSinkPartition(Generic[X]):
    def write_batch(self, items: list[X]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        return None


class DynamicSink(Sink, Generic[X]):
    """A sink with one partition per worker."""

    def build(self, step_id: str, worker_index: int, worker_count: int) -> StatelessSinkPartition[X]:
        raise NotImplementedError


@dataclass(frozen=True)
class KafkaSinkMessage:
    """A record for a Kafka sink: bytewax's message of the same name."""

    key: Any
    value: Any
    topic: str | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    partition: int | None = None
    timestamp: int = 0


@dataclass(frozen=True)
class RecoveryConfig:
    """A recovery store's settings, as bytewax takes them; the plain engine refuses to run with one."""

    db_dir: Any
    backup_interval: Any = None
