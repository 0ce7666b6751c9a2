"""Stage two of a group run: the merges of every monitor, in whichever process the group `<group>.merge` gives the
steps topic to. It writes the records the steps make, then checkpoints the merges with the offset after the last step
merged; a process that takes the merge over goes on from that checkpoint, so a record may come twice (the same record,
with the same id and hash), never differently."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import OFFSET_BEGINNING

from fairstream.compiler.plan import Plan
from fairstream.connectors.group.chunks import Joiner
from fairstream.connectors.group.logs import GroupTopics, group_consumer, latest, produce, write_checkpoint
from fairstream.connectors.group.trials_stage import member_config
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.dataflow.group import GroupMerge, decode
from fairstream.process.telemetry import SILENT, Telemetry

log = logging.getLogger("fairstream.group")

MERGE_NAME = "merge"
"""The name of the merges' checkpoint on the merge topic (its parts: `merge/<offset>/<part>`)."""
ENDED_KEY = b"ended"
"""The merge topic's mark that every input partition has ended (`--until-end`)."""


class MergeStage:
    """The job's merges while this process holds them; `sink` writes their records (and returns once Kafka has them)."""

    def __init__(
        self,
        kafka: KafkaConnection,
        topics: GroupTopics,
        plans: Sequence[Plan],
        partitions: int,
        producer: Any,
        sink: Any,
        encode: Callable[[dict[str, Any]], Any],
        *,
        snapshot_seconds: float,
        telemetry: Telemetry = SILENT,
    ):
        self._kafka, self._topics, self._plans, self._partitions = kafka, topics, list(plans), partitions
        self._producer, self._sink, self._encode = producer, sink, encode
        self._snapshot_seconds, self._telemetry = snapshot_seconds, telemetry
        self.merge: GroupMerge | None = None
        self._position = self._read = 0
        self._joiner = Joiner()
        self._written: tuple[int, int] | None = None
        """The offset and count of parts of the merges' checkpoint on the topic, deleted once a newer is written."""
        self._saved_at = 0.0
        self._saved_position = -1
        self.ended_written = False
        self._parked: GroupMerge | None = None
        self.taken = 0
        """Times this process took the merge over from a checkpoint."""
        self._consumer = group_consumer(member_config(kafka, f"{topics.group}.merge", eof=False))
        self._consumer.subscribe([topics.steps], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost)

    def poll(self, timeout: float) -> int:
        """Merge the steps that have come; the number of steps read."""
        messages = self._consumer.consume(5000, timeout)
        merge = self.merge
        if merge is None:
            return 0
        records: list[dict[str, Any]] = []
        for message in messages:
            if message.error() is None:
                whole = self._joiner.add(message.key(), message.value(), message.offset())
                if whole is not None:
                    records.extend(merge.receive(decode(whole)))
                self._read = message.offset() + 1
        open_from = self._joiner.earliest_open()
        self._position = self._read if open_from is None else open_from  # a step read in part is read again
        if records:
            self._sink.write_batch([encoded for encoded in map(self._encode, records) if encoded is not None])
        now = time.monotonic()
        if merge.ended and not self.ended_written:
            self.checkpoint()
            produce(self._producer, self._topics.merge, b"1", ENDED_KEY)
            self._producer.flush()
            self.ended_written = True
        elif now - self._saved_at >= self._snapshot_seconds:
            self.checkpoint()
        return len(messages)

    def checkpoint(self) -> None:
        """Checkpoint the merges (their records are written: the sink returns once Kafka has them)."""
        self._saved_at = time.monotonic()
        if self.merge is None or self._saved_position == self._position:
            return
        self._written = write_checkpoint(self._producer, self._topics.merge, MERGE_NAME, self._position, self.merge.checkpoint(self._position), self._written)
        self._producer.flush()
        self._saved_position = self._position

    def close(self) -> None:
        self._consumer.close()
        self._sink.close()

    def _assigned(self, consumer: Any, partitions: list[Any]) -> None:
        """Take the merge if the group gives it: from memory where this member gave it back at the rebalance just
        before, else from its checkpoint."""
        parked, self._parked = self._parked, None
        if not partitions:
            consumer.assign(partitions)
            return
        if parked is not None:
            self.merge = parked
        else:
            found = latest(self._kafka, self._topics.merge).get(MERGE_NAME)
            checkpoint = None if found is None else decode(found[2])
            self._written = None if found is None else found[:2]
            self.merge = GroupMerge(self._plans, self._partitions, checkpoint, self._telemetry)
            self._position = self._saved_position = 0 if checkpoint is None else checkpoint.steps_offset
            if checkpoint is not None:
                self.taken += 1
            log.info("the merge taken: from offset %d of %s", self._position, self._topics.steps)
        self._read, self._joiner = self._position, Joiner()
        for assigned in partitions:
            assigned.offset = OFFSET_BEGINNING if self._position == 0 else self._position
        consumer.assign(partitions)

    def _revoked(self, consumer: Any, partitions: list[Any]) -> None:
        """The group rebalances: checkpoint the merge and keep it, in case it comes back."""
        if partitions and self.merge is not None:
            self.checkpoint()
            self._parked, self.merge = self.merge, None

    def _lost(self, consumer: Any, partitions: list[Any]) -> None:
        self._parked = self.merge = None
