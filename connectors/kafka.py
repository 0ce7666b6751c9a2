"""Kafka edges of the dataflow: topics, a source that yields `RawRecord`s, and the sink for alert, estimate and dead-letter records."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaException

from fairstream.connectors.broker_watch import gone_message
from fairstream.connectors.kafka_config import CONNECT_TIMEOUT, ClientErrors, KafkaConnection, as_connection
from fairstream.engine.api import DynamicSink, KafkaSinkMessage, StatelessSinkPartition
from fairstream.process.lifecycle import stop_requested
from fairstream.records import wire
from fairstream.records.cloudevents import kafka_headers
from fairstream.records.envelope import SEAL
from fairstream.records.errors import ConnectorError, UndeliveredError
from fairstream.records.timefmt import format_duration

log = logging.getLogger("fairstream.kafka")

PRODUCER_CONFIG = {"partitioner": "murmur2_random", "enable.idempotence": "true", "acks": "all"}
"""librdkafka settings for every producer: murmur2 places a key on the partition kafka-python and Java choose."""

CONSUMER_CONFIG = {"fetch.wait.max.ms": "20", "fetch.queue.backoff.ms": "10", "allow.auto.create.topics": "false"}
"""librdkafka settings for the monitor's consumers: a broker that holds fetches until the wait runs out delays verdicts by
that long; and once a partition's local queue holds `queued.min.messages`, librdkafka postpones its next fetch by
`fetch.queue.backoff.ms` (default 1 s), which over a backlog leaves the consumer idle most of the time. A topic the
monitor reads is never created by asking for it: a misspelt name stays missing and is reported."""

ADMIN_CONFIG = {"allow.auto.create.topics": "false"}
"""An admin client is a producer to librdkafka, which asks brokers to create any topic whose metadata it requests;
fairstream creates only its output topics, explicitly."""

STOP_GRACE = 5.0
"""Seconds a sink still waits for acknowledgements once a stop was requested; then the run ends, naming what is undelivered."""

LOST_TOPIC_PROBE = 10.0
"""Seconds between the checks, while records wait, that their topics still exist on the broker."""

MISSING_TOPIC_EVERY = 30.0
"""Seconds between the reports of a tailed input topic that does not exist (yet)."""


Inputs = tuple[KafkaConnection, list[str]]
"""A job's input topics and their broker, which a sink waiting on acknowledgements checks too."""


def dead_letter_topic(alerts_topic: str) -> str:
    return f"{alerts_topic}.dlq"


def seals_topic(alerts_topic: str) -> str:
    """Where the seals of a job's hash chains go (see `records.chain`)."""
    return f"{alerts_topic}.seals"


def estimates_topic(alerts_topic: str) -> str:
    return f"{alerts_topic}.estimates"


def _admin(kafka: KafkaConnection) -> tuple[Any, ClientErrors]:
    """An admin client with an error callback that keeps what librdkafka reports (see `KafkaConnection.unreachable`)."""
    from confluent_kafka.admin import AdminClient

    errors = ClientErrors()
    return AdminClient(kafka.client({**ADMIN_CONFIG, "error_cb": errors})), errors


def _metadata(kafka: KafkaConnection, admin: Any, errors: ClientErrors, topic: str | None, timeout: float) -> Any:
    """The cluster's metadata (for `topic`, or all topics), or one line saying why the broker did not answer."""
    try:
        return admin.list_topics(topic, timeout=timeout)
    except Exception as err:  # librdkafka raises KafkaException with a transport or timeout error
        raise kafka.unreachable(err, errors, admin) from None


def reach(kafka: KafkaConnection | str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Return once the broker answers a metadata request; else raise the one line that says why (refused login or
    certificate, no route), so a command can fail before work that does not need the broker."""
    kafka = as_connection(kafka)
    _metadata(kafka, *_admin(kafka), None, timeout)


BROKER_DEFAULT = -1
"""The replication factor that asks the broker for its own `default.replication.factor` (Kafka 2.4 and later)."""


def ensure_topics(
    kafka: KafkaConnection | str, topics: dict[str, int], timeout: float = CONNECT_TIMEOUT, *, replication_factor: int | None = None, configs: dict[str, dict[str, str]] | None = None
) -> dict[str, int]:
    """Create missing topics with the given partition counts and topic `configs` (by name), replicated
    `replication_factor` times (None: the broker's default where the broker can apply it, else 1); return every topic's
    actual partition count."""
    kafka = as_connection(kafka)
    admin, errors = _admin(kafka)
    existing = _metadata(kafka, admin, errors, None, timeout).topics
    missing = {name: count for name, count in topics.items() if name not in existing}
    failed = _create(kafka, admin, missing, BROKER_DEFAULT if replication_factor is None else replication_factor, timeout, configs or {})
    if failed and replication_factor is None:  # a broker older than Kafka 2.4 cannot apply its default
        failed = _create(kafka, admin, {name: missing[name] for name in failed}, 1, timeout, configs or {})
    if failed:
        name, err = next(iter(failed.items()))
        raise ConnectorError(f"cannot create topic {name!r} on {kafka.bootstrap}: {err}")
    return _partition_counts(kafka, admin, errors, list(topics), timeout)


def _create(kafka: KafkaConnection, admin: Any, topics: dict[str, int], replication_factor: int, timeout: float, configs: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Create `topics`; return those that failed (a topic made meanwhile by another client is not a failure)."""
    from confluent_kafka.admin import NewTopic

    if not topics:
        return {}
    failed = {}
    new = [NewTopic(name, num_partitions=count, replication_factor=replication_factor, config=configs.get(name, {})) for name, count in topics.items()]
    for name, future in admin.create_topics(new, request_timeout=timeout).items():
        try:
            future.result(timeout)
        except Exception as err:
            if "TOPIC_ALREADY_EXISTS" not in str(err):
                failed[name] = err
    return failed


def retention_ms(kafka: KafkaConnection | str, topics: list[str], timeout: float = CONNECT_TIMEOUT) -> dict[str, int | None]:
    """Each topic's `retention.ms` as the broker states it (-1: kept for ever); None where the broker does not say."""
    from confluent_kafka.admin import ConfigResource

    kafka = as_connection(kafka)
    admin, _errors = _admin(kafka)
    found: dict[str, int | None] = {}
    asked = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic) for topic in topics], request_timeout=timeout)
    for resource, future in asked.items():
        try:
            entry = future.result(timeout).get("retention.ms")
            found[resource.name] = int(entry.value) if entry is not None and entry.value is not None else None
        except Exception:  # a broker without DescribeConfigs, or a topic it does not describe
            found[resource.name] = None
    return found


def warn_short_retention(kafka: KafkaConnection | str, topics: list[str], wanted_ms: int) -> None:
    """One warning line per output topic that existed before with a shorter retention than the run's: the broker
    removes its records sooner than the run says it keeps them."""
    for topic, kept in retention_ms(kafka, topics).items():
        if kept is not None and 0 <= kept < wanted_ms:
            log.warning(
                "topic %r keeps records %s, less than --retention %s: the broker removes them sooner (raise its retention.ms)",
                topic, format_duration(kept), format_duration(wanted_ms),
            )  # fmt: skip


def partition_counts(kafka: KafkaConnection | str, topics: list[str], timeout: float = CONNECT_TIMEOUT) -> dict[str, int]:
    kafka = as_connection(kafka)
    return _partition_counts(kafka, *_admin(kafka), topics, timeout)


def _partition_counts(kafka: KafkaConnection, admin: Any, errors: ClientErrors, topics: list[str], timeout: float) -> dict[str, int]:
    counts = {}
    for topic in topics:
        metadata = _metadata(kafka, admin, errors, topic, timeout).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            raise ConnectorError(f"topic {topic!r} does not exist on {kafka.bootstrap}")
        counts[topic] = len(metadata.partitions)
    return counts


def lost_topics(kafka: KafkaConnection | str, topics: list[str], timeout: float = CONNECT_TIMEOUT) -> list[str]:
    """The given topics the broker no longer has (deleted, or the broker replaced by one without them); raises
    `ConnectorError` when it does not answer."""
    kafka = as_connection(kafka)
    admin, errors = _admin(kafka)
    existing = _metadata(kafka, admin, errors, None, timeout).topics
    return [topic for topic in topics if topic not in existing]


def wait_for_topic(kafka: KafkaConnection | str, topic: str, *, every: float = MISSING_TOPIC_EVERY, poll: float = 1.0) -> int:
    """The partition count of `topic` once it exists, saying every `every` seconds that it does not yet; returns 0 when a
    stop is requested while waiting."""
    kafka = as_connection(kafka)
    admin, errors = _admin(kafka)
    started = time.monotonic()
    reported: float | None = None
    while not stop_requested():
        metadata = _metadata(kafka, admin, errors, None, CONNECT_TIMEOUT).topics.get(topic)
        if metadata is not None and metadata.error is None and metadata.partitions:
            return len(metadata.partitions)
        now = time.monotonic()
        if reported is None:
            reported = now
            log.warning("input topic %r does not exist on %s; waiting for it to be created (said again every %.0f s)", topic, kafka.bootstrap, every)
        elif now - reported >= every:
            reported = now
            log.warning("input topic %r still does not exist on %s after %.0f s; waiting", topic, kafka.bootstrap, now - started)
        time.sleep(poll)
    return 0


class _DeliveredPartition(StatelessSinkPartition[KafkaSinkMessage]):
    """Produces a batch and returns only once the broker has acknowledged every record of it.

    bytewax counts an epoch as done, and lets its recovery snapshot stand, only after the sink has returned from every
    batch of that epoch: so a crash can repeat output, never lose it. A record the broker refuses, or that is not
    acknowledged within `message.timeout.ms`, raises instead of being dropped (bytewax's own KafkaSink ignores them).
    """

    def __init__(self, producer: Any, topic: str, kafka: KafkaConnection, give_up_after: float | None, inputs: Inputs | None = None):
        self._producer = producer
        self._inputs = inputs
        self._topic = topic
        self._kafka = kafka
        self._bootstrap = kafka.bootstrap
        self._give_up_after = give_up_after
        self._failures: list[str] = []
        self._topics: set[str] = set()
        """The topics of the records produced since the last flush."""
        self._failed = False

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is not None:
            self._failures.append(f"{msg.topic()}: {err.str()}")

    def write_batch(self, items: list[KafkaSinkMessage]) -> None:
        producer = self._producer
        for msg in items:
            while True:
                try:
                    producer.produce(msg.topic or self._topic, msg.value, msg.key, headers=msg.headers, on_delivery=self._delivered)
                    self._topics.add(msg.topic or self._topic)
                    break
                except BufferError:  # the local queue is full: wait for deliveries to make room
                    producer.poll(0.1)
                except KafkaException as err:  # refused before sending, e.g. a record over message.max.bytes: one line, not a traceback
                    raise ConnectorError(f"cannot produce a record of {len(msg.value or b''):,} bytes to {msg.topic or self._topic!r}: {err.args[0].str()}") from None
            producer.poll(0)
        self._flush()

    def _flush(self) -> None:
        """Wait for every record to be acknowledged, saying so every 30 s; give up when told to, when a stop was
        requested `STOP_GRACE` seconds ago, or when the broker answers without a topic the records go to."""
        try:
            self._wait_for_acknowledgements()
        except ConnectorError:
            self._failed = True
            raise

    def _wait_for_acknowledgements(self) -> None:
        started = reported = probed = time.monotonic()
        stop_seen: float | None = None
        while waiting := self._producer.flush(1.0):  # librdkafka gives up on a record after message.timeout.ms and reports it
            if self._failures:
                break
            now = time.monotonic()
            if stop_requested():
                stop_seen = stop_seen or now
                if now - stop_seen >= STOP_GRACE:
                    raise UndeliveredError(waiting, self._bootstrap)
            if self._give_up_after is not None and now - started >= self._give_up_after:
                raise ConnectorError(f"{waiting} record(s) not acknowledged by Kafka at {self._bootstrap} for {now - started:.0f} s; giving up")
            if now - probed >= LOST_TOPIC_PROBE:
                probed = now
                self._check_topics(waiting)
            if now - reported >= 30:
                reported = now
                log.warning("%d record(s) waiting for Kafka at %s for %.0f s; retrying", waiting, self._bootstrap, now - started)
        self._topics.clear()
        if self._failures:
            failures, self._failures = self._failures, []
            raise ConnectorError(f"the broker did not take {len(failures)} record(s); first: {failures[0]}")

    def _check_topics(self, waiting: int) -> None:
        """Raise when the broker answers but lacks a topic records are waiting for (deleted, or a broker replaced)."""
        admin, errors = _admin(self._kafka)
        try:
            existing = admin.list_topics(timeout=LOST_TOPIC_PROBE / 2).topics
        except Exception:  # no answer: the broker is down, which the waiting reports
            return
        gone = sorted(self._topics - set(existing))
        if gone:
            raise ConnectorError(
                f"output topic {gone[0]!r} is gone from Kafka at {self._bootstrap} (deleted, or the broker replaced by one without it); "
                f"{waiting} record(s) not delivered"
            )
        if self._inputs is not None:  # the source is not read while a batch waits here: its topics are checked here too
            kafka, topics = self._inputs
            try:
                lost = [topic for topic in topics if topic not in existing] if kafka.bootstrap == self._bootstrap else lost_topics(kafka, topics, timeout=LOST_TOPIC_PROBE / 2)
            except ConnectorError:
                return
            if lost:
                raise ConnectorError(f"{gone_message(lost[0], kafka.bootstrap)}; {waiting} output record(s) not delivered")

    def close(self) -> None:
        if not self._failed:  # once a batch failed, the dataflow is unwinding: raising again would abort the process
            self._flush()


class DeliveredKafkaSink(DynamicSink[KafkaSinkMessage]):
    """A Kafka sink (one producer per worker) whose every batch is acknowledged before the dataflow moves on."""

    def __init__(self, kafka: KafkaConnection | str, topic: str, give_up_after: float | None = None, inputs: Inputs | None = None):
        kafka = as_connection(kafka)
        self._kafka = kafka
        self._config = kafka.client(PRODUCER_CONFIG)
        self._topic = topic
        self._give_up_after = give_up_after
        self._inputs = inputs

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _DeliveredPartition:
        return _DeliveredPartition(granted_producer(self._config), self._topic, self._kafka, self._give_up_after, self._inputs)


PRODUCER_ID_WAIT = 10.0
"""Seconds a sink waits, as it starts, for its producer id; a broker that has not granted one by then is reported by the
first batch's wait for acknowledgements."""


def granted_producer(config: dict[str, Any]) -> Any:
    """An idempotent producer that holds its producer id. librdkafka asks for the id only after it replaced its bootstrap
    connection by the broker's own, about 0.5 s after it starts, and a record waits until then: a sink that waits here
    answers its first records, while the job starts, as fast as the rest."""
    from confluent_kafka import Producer

    if str(config.get("enable.idempotence")).lower() != "true":  # turned off in the client settings: no id to wait for
        return Producer(config)
    granted = threading.Event()

    def statistics(report: str) -> None:
        if '"idemp_state": "Assigned"' in report:
            granted.set()

    producer = Producer({**config, "statistics.interval.ms": "100", "stats_cb": statistics})
    deadline = time.monotonic() + PRODUCER_ID_WAIT
    while not granted.is_set() and time.monotonic() < deadline and not stop_requested():
        producer.poll(0.02)
    return producer


def kafka_sink(kafka: KafkaConnection | str, alerts_topic: str, give_up_after: float | None = None, inputs: Inputs | None = None) -> DeliveredKafkaSink:
    """Alerts, estimates and dead letters to Kafka, each batch acknowledged; waiting over 30 s is reported, over
    `give_up_after` s an error, and an output topic or one of the job's input `topics` gone from its broker ends it."""
    return DeliveredKafkaSink(kafka, alerts_topic, give_up_after, inputs)


def record_encoder(alerts_topic: str, shielded_topic: str = "decisions.shielded"):
    """Routes records: alerts and shield interventions to the alert topic, estimates to `<alerts>.estimates`, dead
    letters and undelivered notifications to `<alerts>.dlq`, the chains' seals to `<alerts>.seals`, shield statuses beside the estimates, shielded decisions (the decision record, keyed by its id) to `shielded_topic`.
    Every record but a shielded decision (the decision maker's own record) carries its CloudEvents attributes as
    `ce_` headers (the binary mode of the Kafka protocol binding)."""
    dlq, snapshots, seals = dead_letter_topic(alerts_topic), estimates_topic(alerts_topic), seals_topic(alerts_topic)

    def encode(record: dict[str, Any]) -> KafkaSinkMessage:
        kind = record["type"]
        if kind == "shield.decision":
            return KafkaSinkMessage(record["id"].encode(), wire.encode_decision(record), topic=shielded_topic)
        topic = dlq if kind in ("pipeline.dead_letter", "pipeline.undelivered") else snapshots if kind in ("fairness.estimate", "shield.status") else seals if kind == SEAL else alerts_topic
        key = record.get("monitor") or record.get("reason") or record.get("writer") or ""
        return KafkaSinkMessage(key.encode(), wire.encode(record), topic=topic, headers=kafka_headers(record))

    return encode


def undelivered_to_topic(kafka: KafkaConnection | str, alerts_topic: str) -> Callable[[list[dict[str, Any]]], None]:
    """A writer of `pipeline.undelivered` records to the dead-letter topic, each call acknowledged (or named in one
    line) within `STOP_GRACE` seconds: notifications that fail are rare, and the run may be ending."""
    from confluent_kafka import Producer

    producer = Producer(as_connection(kafka).client(PRODUCER_CONFIG))
    encode = record_encoder(alerts_topic)
    lock = threading.Lock()

    def write(records: list[dict[str, Any]]) -> None:
        with lock:
            for record in records:
                message = encode(record)
                with contextlib.suppress(BufferError, KafkaException):
                    producer.produce(message.topic, message.value, message.key, headers=message.headers)
            if waiting := producer.flush(STOP_GRACE):
                log.error("%d undelivered notification record(s) not acknowledged by Kafka at %s either", waiting, as_connection(kafka).bootstrap)

    return write
