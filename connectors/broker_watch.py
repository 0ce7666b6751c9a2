"""Notice a Kafka broker that stopped answering while a tailed topic is quiet, say so, and give up when told to.

A tailing consumer cannot tell a quiet topic from a broker that is gone: librdkafka retries in the background and
only logs (a topic read to its end, likewise, while the broker is gone). So while no message arrives, the watch asks
the broker for metadata every `probe_every` seconds; a
failed probe is reported at once and then every `report_every` seconds, and after `give_up_after` seconds (when
set) it raises, so the run stops with one line and a non-zero exit instead of waiting forever. A broker that answers
but no longer has the input topic (deleted, or the broker replaced by a fresh one) stops the run at once: offsets
into a topic that is gone mean nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from fairstream.connectors.kafka_config import KafkaConnection, as_connection
from fairstream.records.errors import ConnectorError

log = logging.getLogger("fairstream.kafka")


class BrokerWatch:
    """Shared by the partitions a process reads from one broker, so a broker that is gone is reported once."""

    def __init__(
        self,
        kafka: KafkaConnection | str,
        *,
        topics: list[str] | None = None,
        give_up_after: float | None = None,
        probe_every: float = 10.0,
        report_every: float = 30.0,
        probe_timeout: float = 5.0,
    ):
        self.kafka = as_connection(kafka)
        self.bootstrap = self.kafka.bootstrap
        self.topics = topics or []
        self.give_up_after = give_up_after
        self.probe_every = probe_every
        self.report_every = report_every
        self.probe_timeout = probe_timeout
        self._lock = threading.Lock()
        self._admin: Any = None
        self._last_probe = time.monotonic()
        self._down_since: float | None = None
        self._last_report = 0.0

    def __getstate__(self) -> dict[str, Any]:  # the dataflow may be pickled to other processes: no client, no lock
        return {name: value for name, value in self.__dict__.items() if name not in ("_lock", "_admin")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock(), _admin=None)

    def heard(self) -> None:
        """A message arrived: the broker answers."""
        self._last_probe = time.monotonic()
        if self._down_since is not None:
            with self._lock:
                self._answered(self._last_probe)

    def quiet(self) -> None:
        """No message this time: probe the broker when it is due, report and give up as configured."""
        now = time.monotonic()
        if now - self._last_probe < self.probe_every or not self._lock.acquire(blocking=False):
            return
        try:
            self._last_probe = now
            if self._answers():
                self._answered(now)
                return
            now = time.monotonic()
            if self._down_since is None:
                self._down_since = self._last_report = now
                log.warning("Kafka at %s does not answer; retrying%s", self.bootstrap, self._until())
            elif now - self._last_report >= self.report_every:
                self._last_report = now
                log.warning("Kafka at %s has not answered for %.0f s; retrying%s", self.bootstrap, now - self._down_since, self._until())
            if self.give_up_after is not None and now - self._down_since >= self.give_up_after:
                raise ConnectorError(f"Kafka at {self.bootstrap} has not answered for {now - self._down_since:.0f} s; giving up (--give-up-after {self.give_up_after:g})")
        finally:
            self._lock.release()

    def _answered(self, now: float) -> None:
        """The broker answers: say so once if it had been reported gone (call with the lock held)."""
        if self._down_since is not None:
            log.warning("Kafka at %s answers again after %.0f s", self.bootstrap, now - self._down_since)
            self._down_since = None

    def _until(self) -> str:
        return f" (giving up after {self.give_up_after:g} s)" if self.give_up_after is not None else ""

    def _answers(self) -> bool:
        from confluent_kafka.admin import AdminClient

        if self._admin is None:
            self._admin = AdminClient(self.kafka.client({"allow.auto.create.topics": "false"}))
        try:
            topics = self._admin.list_topics(timeout=self.probe_timeout).topics
        except Exception:  # librdkafka raises KafkaException with a transport or timeout error
            return False
        gone = [topic for topic in self.topics if topic not in topics]
        if gone:
            raise ConnectorError(gone_message(gone[0], self.bootstrap))
        return True


def gone_message(topic: str, bootstrap: str, kind: str = "input") -> str:
    """The one line that ends a run whose topic is gone: a resume from its recovery store cannot work."""
    return (
        f"{kind} topic {topic!r} is gone from Kafka at {bootstrap} (deleted, or the broker replaced by one without it); "
        "the offsets read so far refer to the lost topic: start again without --recovery, or with a new store"
    )
