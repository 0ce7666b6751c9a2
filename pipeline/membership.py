"""Run a monitor job as one member of a Kafka consumer group (`fairstream run --group NAME`): any number of processes,
on any machines, share the input topic's partitions and may join or leave while it runs."""

from __future__ import annotations

import dataclasses

from fairstream import metrics
from fairstream.connectors.kafka_source import IDLE_AFTER
from fairstream.connectors.metrics_server import serving
from fairstream.connectors.notify import notifying
from fairstream.jobs import Job, KafkaInput, KafkaOutput
from fairstream.process.lifecycle import stopping
from fairstream.records.errors import UsageError
from fairstream.records.signing import signing
from fairstream.runner import JOB_TELEMETRY, job_output, job_plans, kafka_of, prepare, undelivered_place, undelivered_writer
from fairstream.verdicts.tally import RunTally


def check_member(job: Job) -> None:
    """Refuse, in one line, what a group member cannot do: files, several topics, shields, a recovery store."""
    if not isinstance(job.input, KafkaInput) or not isinstance(job.output, KafkaOutput):
        raise UsageError("--group reads a Kafka topic and writes to Kafka (--bootstrap): a consumer group shares a topic's partitions")
    if len(job.input.topics) > 1:
        raise UsageError("--group reads one topic; several co-partitioned topics run with --processes or --addresses")
    if job.shield:
        raise UsageError("a shield job answers each decision where it is read: run one per process with --processes or --addresses, not --group")
    if job.recovery is not None:
        raise UsageError("--group keeps its state in the group's own Kafka topics (<group>.checkpoints, <group>.merge): leave out --recovery")


def run_member(job: Job) -> RunTally:
    """Take part in the job's consumer group until stopped or, with `tail=False`, until every input partition has ended
    and the merge has written its records; the tally of what this member read and wrote."""
    from fairstream.connectors.group.run import run_group  # a group run alone needs it

    check_member(job)
    assert isinstance(job.input, KafkaInput) and isinstance(job.output, KafkaOutput) and job.group is not None
    plans = job_plans(job)
    tally = metrics.start_tally()
    if not prepare(job):
        return tally
    sink, encode = job_output(job, plans)
    with (
        stopping(),
        serving(job.metrics_port, job.metrics_host),
        notifying(job.alertmanager, job.webhooks, lambda: undelivered_writer(job), undelivered_place(job), job.runbook_url),
        signing(job.signing_key),
    ):
        outcome = run_group(
            kafka_of(job, job.input), job.group, job.input.topics[0], plans, sink, encode, tail=job.input.tail, idle_after=IDLE_AFTER,
            snapshot_seconds=job.snapshot_seconds, replication_factor=job.output.replication_factor, telemetry=JOB_TELEMETRY,
        )  # fmt: skip
    tally.group = dataclasses.asdict(outcome)
    return tally
