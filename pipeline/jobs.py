"""What a job is: a spec, an input (files or Kafka topics) and an output (a directory or an alert topic), with the
settings every worker process needs to build the same dataflow as its peers (typed models, passed as JSON)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from fairstream.paths import RUNBOOK_URL

InputFormat = Literal["compas", "csv", "jsonl"]
FORMATS: tuple[InputFormat, ...] = ("compas", "csv", "jsonl")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileInput(_Model):
    kind: Literal["file"] = "file"
    path: str | list[str]
    """A file, or several: each is one input partition, in the order given (a glob pattern stands for its matches, sorted)."""
    format: InputFormat
    columns: list[str] | None = None
    """A CSV file without a header line: its column names (else the spec's input.columns, else the header)."""
    sorted: bool = False
    """The files are in event-time order already: read them as they are (else each is sorted first, see `event_order`)."""


class KafkaInput(_Model):
    kind: Literal["kafka"] = "kafka"
    bootstrap: str
    topics: list[str] = Field(min_length=1)
    """The decision topics; several must be co-partitioned, and partition i of each is read as input partition i."""
    tail: bool = True
    give_up_after: float | None = None
    """Tailing: stop with an error once the broker has not answered for this many seconds (None: keep retrying)."""


class FileOutput(_Model):
    kind: Literal["file"] = "file"
    out_dir: str
    retention_s: float | None = None
    """Remove the records older than this (seconds since written), a rotated segment at a time; None: keep them all."""
    rotate_every_s: float = 86400.0
    """With a retention: start a new segment of each output file this often (wall-clock seconds)."""


class KafkaOutput(_Model):
    kind: Literal["kafka"] = "kafka"
    bootstrap: str
    alerts: str
    replication_factor: int | None = None
    """Replicas of each output topic fairstream creates; None: the broker's default (1 where a broker cannot apply it)."""
    retention_s: float | None = None
    """The output topics fairstream creates keep records this long (`retention.ms`); None: the broker's default."""


class Job(_Model):
    """Everything a worker process needs to build the same dataflow as its peers."""

    spec: str | list[str]
    """A spec (path or bundled name), or several monitored together over one read of the input (a folder counts as its specs)."""
    input: Annotated[FileInput | KafkaInput, Field(discriminator="kind")]
    output: Annotated[FileOutput | KafkaOutput, Field(discriminator="kind")]
    recovery: str | None = None
    snapshot_seconds: float = 2.0
    metrics_port: int | None = None
    """Serve Prometheus metrics and /healthz on this port while the job runs (worker process i of several: port + i)."""
    metrics_host: str = "127.0.0.1"
    """The address the metrics endpoint listens on: loopback unless exposed on purpose (it has no authentication)."""
    kafka_config: str | None = None
    """A Java-style properties file of Kafka client settings; FAIRSTREAM_KAFKA_* variables add to it in every process
    (so that no secret is passed on a worker's command line)."""
    shield: bool = False
    """Run the spec's shield on the decision path instead of the monitor."""
    alertmanager: str | None = None
    """Alertmanager's base URL: violations, recoveries and certifications are posted to its v2 API."""
    webhooks: list[str] = []
    """URLs every alert record is posted to as JSON."""
    runbook_url: str = RUNBOOK_URL
    """The runbook Alertmanager alerts point to: each alert's `runbook_url` is its section of it."""
    signing_key: str | None = None
    """An Ed25519 private key (PEM): every record's chain hash is signed with it (see `records.signing`)."""
    group: str | None = None
    """Run as one member of this Kafka consumer group: processes with the same group share the input's partitions and
    may join or leave at any time (state in the group's topics, see `connectors.group`)."""


class Cluster(_Model):
    """One process of a job spread over machines: every process's address, and which of them this one is."""

    addresses: list[str]
    """HOST:PORT of each process, in process order; the same list on every machine."""
    process_id: int
    """This process's place in `addresses`."""
