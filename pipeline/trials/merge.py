"""Several co-partitioned topics read as one input partition: their events merged into one event-time order (pure).

Partition i of each topic holds the same dependence keys (equal partition counts, one partitioner), so the trials of
those keys stay where partition i is read; what the topics do not share is an order. As Kafka Streams orders the
partitions of one task, an event is released once every topic still delivering has gone past its time (an event of
equal time may still come); a topic that has gone quiet (idle) or ended is not waited for until it delivers again.
The merged order of events that arrive in time order on each topic is the order of one topic holding them all, ties
broken by the kind's place in `input.kinds`, then by topic.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from fairstream.records.events import Event
from fairstream.trials.clock import LatenessBuffer


class TopicMerge:
    """The events of one input partition's topics, held (in a `LatenessBuffer`, each topic its source) until every
    topic that is waited for has gone past their time."""

    def __init__(self, topics: list[str], kind_rank: dict[str, int]):
        self.topics = list(topics)
        self._index = {topic: index for index, topic in enumerate(self.topics)}
        self.highs: list[int | None] = [None] * len(self.topics)
        """Per topic, its latest event time; None before its first event."""
        self.waited = [True] * len(self.topics)
        """Per topic, whether it bounds what is released (False once it is quiet or ended, until its next event)."""
        self.ended = [False] * len(self.topics)
        self.buffer = LatenessBuffer(kind_rank)

    def __len__(self) -> int:
        return len(self.buffer)

    @property
    def quiet(self) -> bool:
        """Every topic is quiet or ended: nothing is to be waited for."""
        return not any(self.waited)

    @property
    def idle(self) -> bool:
        """Every topic is quiet or ended, and not all have ended: the partition is idle rather than finished."""
        return self.quiet and not all(self.ended)

    def receive(self, events: list[Event], quiet_topics: Iterable[str] = (), ended_topics: Iterable[str] = ()) -> list[Event]:
        """Take a batch (each topic's events in their arrival order) and the topics that reported themselves quiet or
        ended; return the events now due, in event-time order."""
        for topic in quiet_topics:
            self.waited[self._index[topic]] = False
        for topic in ended_topics:
            self.waited[self._index[topic]] = False
            self.ended[self._index[topic]] = True
        by_topic: dict[int, list[Event]] = {}
        index, highs = self._index, self.highs
        for event in events:
            topic = index[event.origin.topic]  # type: ignore[union-attr]
            high = highs[topic]
            if high is None or event.time > high:
                highs[topic] = event.time
            self.waited[topic] = True
            by_topic.setdefault(topic, []).append(event)
        for topic, arrived in by_topic.items():
            self.buffer.hold(arrived, source=topic)
        waited = [high for high, wait in zip(self.highs, self.waited) if wait]
        if not waited:
            return self.buffer.drain()
        if any(high is None for high in waited):  # a topic waited for has not delivered yet
            return []
        return self.buffer.release(min(waited))  # type: ignore[type-var]

    def drain(self) -> list[Event]:
        """Every held event, in order: the partition has ended or gone quiet."""
        return self.buffer.drain()

    def copy(self) -> TopicMerge:
        copied = copy.copy(self)
        copied.highs, copied.waited, copied.ended, copied.buffer = list(self.highs), list(self.waited), list(self.ended), self.buffer.copy()
        return copied
