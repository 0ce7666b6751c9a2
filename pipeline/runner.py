"""Run a monitor job (`fairstream.jobs.Job`) in this process, as several cooperating processes, or as one process of a
job spread over machines."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson

from fairstream import metrics
from fairstream.compiler.load import load_plans
from fairstream.compiler.plan import Plan
from fairstream.connectors import notify
from fairstream.connectors.broker import free_ports
from fairstream.connectors.broker_watch import gone_message
from fairstream.connectors.compas import compas_records
from fairstream.connectors.event_order import MAX_BYTES_HELD, blocks_in_order, time_ordered, time_reader
from fairstream.connectors.files import (
    OUTPUT_FILES,
    FileEncoder,
    RecordSource,
    csv_rows,
    jsonl_blocks,
    jsonl_lines,
    numbered_rows,
    output_sink,
)
from fairstream.connectors.kafka import (
    dead_letter_topic,
    ensure_topics,
    estimates_topic,
    kafka_sink,
    lost_topics,
    record_encoder,
    seals_topic,
    undelivered_to_topic,
    wait_for_topic,
    warn_short_retention,
)
from fairstream.connectors.kafka_config import KafkaConnection, load_connection
from fairstream.connectors.kafka_source import co_partitioned, kafka_source
from fairstream.connectors.metrics_server import serving
from fairstream.connectors.notify import UNDELIVERED_FILE, Undelivered, UndeliveredFile, notifying
from fairstream.connectors.recovery import claim_store, prepare_store, resume_epoch, store_failure
from fairstream.connectors.retention.rotating import Rotation
from fairstream.dataflow import collector
from fairstream.dataflow.flow import build_flow
from fairstream.engine.api import ENGINE, Dataflow, FixedPartitionedSource, RecoveryConfig, Sink, cluster_main, run_main
from fairstream.engine.run import check_plain
from fairstream.jobs import Cluster, FileInput, FileOutput, InputFormat, Job, KafkaInput, KafkaOutput
from fairstream.process.lifecycle import die_with_parent, panic_reports_hidden, stopping
from fairstream.process.ownership import holding
from fairstream.records.errors import ConnectorError, FairstreamError, InputError, UsageError, raised_in_dataflow
from fairstream.records.segments import SEGMENTS
from fairstream.records.signing import load_private_key, signing
from fairstream.verdicts.tally import RunTally


def guess_format(path: str | Path) -> InputFormat:
    """The input format from the file name: COMPAS for ProPublica's file, else by extension."""
    name = Path(path).name.lower()
    if name.startswith("compas-scores"):
        return "compas"
    if name.endswith(".csv"):
        return "csv"
    return "jsonl"


def input_files(paths: str | list[str]) -> list[str]:
    """The input files, one partition each: the paths in order, a glob pattern replaced by its matches in name order."""
    files: list[str] = []
    for path in [paths] if isinstance(paths, str) else paths:
        if glob.has_magic(path):
            matches = sorted(glob.glob(path))
            if not matches:
                raise InputError(f"no input file matches {path}")
            files.extend(matches)
        else:
            files.append(path)
    if not files:
        raise InputError("no input file given")
    return files


def records_of(path: str | Path, fmt: InputFormat, columns: list[str] | None = None) -> Callable[[], Iterable[Any]]:
    """A factory of the raw records of an input file in the given format (`columns` names a headerless CSV's columns)."""
    if fmt == "compas":
        return compas_records(path)
    if fmt == "csv":
        return csv_rows(path, columns)
    return jsonl_lines(path)


def file_source(files: list[str], job_input: FileInput, plan: Plan, *, shield: bool = False) -> RecordSource:
    """The input files as partitions, each read in event-time order unless the job or the spec says it is sorted (the
    COMPAS mapping orders its events itself), or a shield reads it: a shield answers decisions in the order they
    arrive, so a file is its arrival order."""
    columns = job_input.columns or plan.spec.input.columns
    factories = [records_of(path, job_input.format, columns) for path in files]
    names = [Path(path).name for path in files]
    if plan.spec.input.numbered:  # a plain table: each row numbered, in row order
        return RecordSource([numbered_rows(factory) for factory in factories], names=names)
    if shield or job_input.sorted or plan.spec.input.sorted or job_input.format == "compas":
        return _in_blocks(files, names) if job_input.format == "jsonl" and not shield else RecordSource(factories, names=names)
    if job_input.format == "jsonl":
        ordered = [blocks_in_order(path, plan.spec.input, max_held=MAX_BYTES_HELD // len(files)) for path in files]
        if all(blocks is not None for blocks in ordered):
            return RecordSource(ordered, names=names, blocks=True)  # type: ignore[arg-type]
    time_of = time_reader(plan.spec.input)
    return RecordSource([time_ordered(factory, time_of) for factory in factories], names=names, positioned=True)


def _in_blocks(files: list[str], names: list[str]) -> RecordSource:
    """JSON-lines files read as they are, a block of lines at a time: the monitor decodes each block at once."""
    return RecordSource([jsonl_blocks(path) for path in files], names=names, blocks=True)


def kafka_of(job: Job, end: FileInput | KafkaInput | FileOutput | KafkaOutput) -> KafkaConnection:
    """The connection to the Kafka of a job's input or output: its bootstrap servers with the job's client settings."""
    assert isinstance(end, KafkaInput | KafkaOutput)
    return load_connection(end.bootstrap, job.kafka_config)


def job_plans(job: Job) -> list[Plan]:
    """The job's monitors; a shield job has exactly one."""
    plans = load_plans([job.spec] if isinstance(job.spec, str) else job.spec)
    if job.shield and len(plans) > 1:
        raise UsageError("a shield job puts one spec's shield on the decision path; give one spec")
    return plans


def job_flow(job: Job, wrap_source: Callable[[FixedPartitionedSource], FixedPartitionedSource] | None = None) -> Dataflow:
    """The dataflow of a job; every worker process builds it the same way (`wrap_source`: a benchmark's probe around the input)."""
    plans = job_plans(job)
    if isinstance(job.input, FileInput):
        files = input_files(job.input.path)
        source = file_source(files, job.input, plans[0], shield=job.shield)
        partitions, strings, topics = len(files), job.input.format == "csv", []
    else:
        kafka = kafka_of(job, job.input)
        source = kafka_source(kafka, job.input.topics, tail=job.input.tail, give_up_after=job.input.give_up_after)
        partitions, strings, topics = co_partitioned(kafka, job.input.topics), False, job.input.topics
    sink, encode = job_output(job, plans)
    if wrap_source is not None:
        source = wrap_source(source)
    if job.shield:
        from fairstream.dataflow.shield_flow import build_shield_flow  # the shields' synthesis needs scipy: monitors start without it

        return build_shield_flow(plans[0], source, sink, partitions=partitions, strings=strings, encode=encode, telemetry=JOB_TELEMETRY)
    return build_flow(plans, source, sink, partitions=partitions, strings=strings, encode=encode, topics=topics, telemetry=JOB_TELEMETRY)


def job_output(job: Job, plans: list[Plan]) -> tuple[Sink, Callable[[dict[str, Any]], Any]]:
    """Where the job's records go, and what turns each into the sink's item."""
    if isinstance(job.output, FileOutput):
        retention, every = job.output.retention_s, job.output.rotate_every_s
        rotation = None if retention is None else Rotation(every, retention)
        return output_sink(job.output.out_dir, rotation), FileEncoder(job.output.out_dir, plans[0].spec.dead_letters.max_file_bytes)
    shielded = f"{job.input.topics[0]}.shielded" if isinstance(job.input, KafkaInput) else "decisions.shielded"
    give_up_after = job.input.give_up_after if isinstance(job.input, KafkaInput) else None
    inputs = (kafka_of(job, job.input), job.input.topics) if isinstance(job.input, KafkaInput) else None
    return kafka_sink(kafka_of(job, job.output), job.output.alerts, give_up_after=give_up_after, inputs=inputs), record_encoder(job.output.alerts, shielded)


class JobTelemetry:
    """A job's telemetry (see `process.telemetry`): its Prometheus metrics and tally, and its alerts to Alertmanager and
    webhooks."""

    def read(self, partition: int, records: int, latest_time_ms: int | None) -> None:
        metrics.read(partition, records, latest_time_ms)

    def open_trials(self, monitor: str, holder: int, count: int) -> None:
        metrics.open_trials(monitor, holder, count)

    def observe(self, record: dict[str, Any]) -> None:
        metrics.observe(record)
        notify.offer(record)


JOB_TELEMETRY = JobTelemetry()


def prepare(job: Job, *, first: bool = True) -> bool:
    """Checks and side effects that must happen once, before any worker starts: specs, input, output topics, recovery
    store. A tailed input topic that does not exist yet is waited for; False when a stop was requested meanwhile.
    `first`: this process makes the outputs and the store ready (process 0 of a cluster, which the others wait for
    before the dataflow starts); the others only check."""
    plans = job_plans(job)
    if job.signing_key is not None:
        load_private_key(job.signing_key)  # a bad key fails before any record is written
    input_partitions = 1
    if isinstance(job.input, FileInput):
        for path in input_files(job.input.path):
            records_of(path, job.input.format)
    else:
        if job.shield and len(job.input.topics) > 1:
            raise UsageError("a shield job reads one decisions topic; give one --topic")
        if job.input.tail:
            with stopping():
                for topic in job.input.topics:
                    if not wait_for_topic(kafka_of(job, job.input), topic):
                        return False
        input_partitions = co_partitioned(kafka_of(job, job.input), job.input.topics)
    if isinstance(job.output, FileOutput):
        out = Path(job.output.out_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
            if job.recovery is None and first:
                for name in (*OUTPUT_FILES, UNDELIVERED_FILE):
                    (out / name).unlink(missing_ok=True)
                shutil.rmtree(out / SEGMENTS, ignore_errors=True)
            (out / ".writable").touch()
            (out / ".writable").unlink()
        except OSError as err:
            raise InputError(f"cannot write to the output directory {out}: {err.strerror}") from None
    elif first:
        alerts = job.output.alerts
        topics = {alerts: 1, dead_letter_topic(alerts): 1, estimates_topic(alerts): 1, seals_topic(alerts): 1}
        if job.shield and isinstance(job.input, KafkaInput):
            topics[f"{job.input.topics[0]}.shielded"] = input_partitions
        kept = {} if job.output.retention_s is None else {name: {"retention.ms": str(round(job.output.retention_s * 1000))} for name in topics}
        ensure_topics(kafka_of(job, job.output), topics, replication_factor=job.output.replication_factor, configs=kept)
        if kept:
            warn_short_retention(kafka_of(job, job.output), list(topics), round(job.output.retention_s * 1000))
    if job.recovery is not None and first:
        prepare_store(Path(job.recovery))
        claim_store(Path(job.recovery), made_for(job, plans, input_partitions))
    return True


def undelivered_writer(job: Job) -> Undelivered:
    """Where the alerts a notification endpoint never accepted are written down: beside the output files, or on the
    dead-letter topic."""
    if isinstance(job.output, FileOutput):
        return UndeliveredFile(Path(job.output.out_dir) / UNDELIVERED_FILE)
    return undelivered_to_topic(kafka_of(job, job.output), job.output.alerts)


def undelivered_place(job: Job) -> str:
    """How the summary names where undelivered alerts are written down."""
    if isinstance(job.output, FileOutput):
        return str(Path(job.output.out_dir) / UNDELIVERED_FILE)
    return f"topic {dead_letter_topic(job.output.alerts)!r}"


def made_for(job: Job, plans: list[Plan], input_partitions: int) -> dict[str, object]:
    """What a recovery store's snapshots depend on: the input, its partitions, the monitors, whether it is a shield, and
    each monitor's spec (its settings live on in the snapshots)."""
    if isinstance(job.input, FileInput):
        source: dict[str, object] = {"input": "files", "partitions": len(input_files(job.input.path))}
    else:
        source = {"input": "topics " + ", ".join(map(repr, job.input.topics)) if len(job.input.topics) > 1 else f"topic {job.input.topics[0]!r}", "partitions": input_partitions}
    return {
        **source,
        "monitors": ",".join(plan.spec.monitor for plan in plans),
        "job": "shield" if job.shield else "monitor",
        "specs": {plan.spec.monitor: plan.spec.model_dump(mode="json") for plan in plans},
    }


def _recovery(job: Job) -> dict[str, Any]:
    if job.recovery is None:
        return {}
    return {
        "epoch_interval": timedelta(seconds=job.snapshot_seconds),
        "recovery_config": RecoveryConfig(Path(job.recovery)),
    }


def execute(job: Job, *, workers: int = 1, processes: int = 1, own_process: bool = False, cluster: Cluster | None = None) -> RunTally:
    """Run the job to its end (files, `tail=False`) or until interrupted, and return what it read and wrote (the tallies
    of all its processes merged; in a `cluster`, this process's); an error a step raised on purpose surfaces as itself.

    `own_process`: the job is all this process does (the CLI), so the collector is settled for it (see `collector`); a
    job reading Kafka then runs in a child process, so that a crash of the Kafka client (librdkafka's, on a topic
    deleted under it) ends the run with the reason in one line rather than a segmentation fault.
    """
    first = cluster is None or cluster.process_id == 0
    job_plans(job)  # a bad spec fails before a store or an output directory is made to hold
    with (
        holding(Path(job.recovery), "recovery store", "--recovery directory") if job.recovery is not None and first else nullcontext() as store,
        holding(Path(job.output.out_dir), "output directory", "--out directory") if isinstance(job.output, FileOutput) and first else nullcontext() as out,
    ):
        return _execute(job, workers, processes, own_process, cluster, first, tuple(lock for lock in (store, out) if lock is not None))


def _execute(job: Job, workers: int, processes: int, own_process: bool, cluster: Cluster | None, first: bool, locks: tuple[int, ...]) -> RunTally:
    """`execute` with the run's directories held (`locks`: their descriptors, which its worker processes hold too)."""
    if ENGINE == "plain":
        check_plain(processes=processes if cluster is None else len(cluster.addresses), recovery=job.recovery is not None)
    tally = metrics.start_tally()
    if not prepare(job, first=first):
        return tally
    resumed = _resumes(job)
    if cluster is not None:
        tally = _run_workers(job, workers, cluster.addresses, [cluster.process_id], locks)
    elif processes > 1 or (own_process and isinstance(job.input, KafkaInput)):  # a Kafka client that crashes takes only a child with it
        tally = _run_workers(job, workers, [f"127.0.0.1:{port}" for port in free_ports(processes)], list(range(processes)), locks)
    else:
        with (
            stopping(),
            serving(job.metrics_port, job.metrics_host),
            notifying(job.alertmanager, job.webhooks, lambda: undelivered_writer(job), undelivered_place(job), job.runbook_url),
            signing(job.signing_key),
            panic_reports_hidden() if own_process else nullcontext(),
            _unwrapped(job.recovery),
        ):
            flow = job_flow(job)
            if own_process:
                collector.settle()
            if workers > 1:
                cluster_main(flow, [], 0, worker_count_per_proc=workers, **_recovery(job))
            else:
                run_main(flow, **_recovery(job))
    tally.resumed = resumed
    return tally


def _resumes(job: Job) -> bool:
    """Whether the job goes on from a snapshot in its recovery store (an earlier execution ran there)."""
    store = None if job.recovery is None else Path(job.recovery)
    return store is not None and any(store.glob("*.sqlite3")) and resume_epoch(store) is not None


def run_worker(job: Job, addresses: list[str], index: int, workers: int, tally_path: Path | None) -> None:
    """One process of a multi-process run (it stops, like the others, on SIGINT or SIGTERM); its tally goes to
    `tally_path` for the parent to merge, also when it was stopped."""
    tally = metrics.start_tally()
    try:
        with (
            stopping(),
            serving(None if job.metrics_port is None else job.metrics_port + index, job.metrics_host),
            notifying(job.alertmanager, job.webhooks, lambda: undelivered_writer(job), undelivered_place(job), job.runbook_url),
            signing(job.signing_key),
            panic_reports_hidden(),
            _unwrapped(job.recovery),
        ):
            flow = job_flow(job)
            collector.settle()
            try:
                cluster_main(flow, addresses, index, worker_count_per_proc=workers, **_recovery(job))
            except BaseException as err:  # pyo3's PanicException is a BaseException
                if len(addresses) > 1 and type(err).__name__ == "PanicException" and "thread panic" in str(err):
                    raise ConnectorError(
                        f"process {index}: a peer of the cluster ({';'.join(addresses)}) stopped answering, so this process stops too; "
                        "start every process again (with the same --recovery to go on from the last snapshot)"
                    ) from None
                raise
    finally:
        if tally_path is not None:
            tally_path.write_text(tally.model_dump_json())


@contextmanager
def _unwrapped(store: str | None) -> Iterator[None]:
    """Re-raise a `FairstreamError` from inside bytewax's runtime errors, so the CLI reports it as one line; so is a
    failure of the recovery `store` itself (see `store_failure`)."""
    try:
        yield
    except Exception as err:
        found = raised_in_dataflow(err) or (store_failure(Path(store), err) if store is not None else None)
        if found is None:
            raise
        raise found from None


class FileRun:
    """Where a file run wrote its outputs."""

    def __init__(self, out_dir: str | Path):
        self.out_dir = Path(out_dir)

    def read(self, name: str) -> list[dict[str, Any]]:
        path = self.out_dir / name
        if not path.exists():
            return []
        with path.open("rb") as handle:
            return [orjson.loads(line) for line in handle if line.strip()]


def run_file(
    spec_path: str | Path,
    input_path: str | Path,
    out_dir: str | Path,
    *,
    fmt: InputFormat | None = None,
    workers: int = 1,
    processes: int = 1,
    presorted: bool = False,
) -> FileRun:
    """Monitor one input file into `out_dir` (`presorted`: it is in event-time order, read it without sorting)."""
    job = Job(
        spec=str(spec_path),
        input=FileInput(path=str(input_path), format=fmt or guess_format(input_path), sorted=presorted),
        output=FileOutput(out_dir=str(out_dir)),
    )
    execute(job, workers=workers, processes=processes)
    return FileRun(Path(out_dir))


def _run_workers(job: Job, workers: int, addresses: list[str], indices: list[int], locks: tuple[int, ...]) -> RunTally:
    """Run the cluster's processes `indices` here, each a child `fairstream worker` holding the run's `locks` and dying
    with this process, and merge their tallies."""
    with tempfile.TemporaryDirectory(prefix="fairstream-tally-") as scratch:
        tallies = [Path(scratch) / f"{index}.json" for index in indices]
        children = [
            subprocess.Popen(
                [sys.executable, "-m", "fairstream.cli", "worker", job.model_dump_json(), ";".join(addresses), str(index), str(workers), str(tally)],
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                pass_fds=locks,
                preexec_fn=die_with_parent,
            )
            for index, tally in zip(indices, tallies, strict=True)
        ]
        _wait_for(children, job)
        merged = RunTally()
        for path in tallies:
            merged.merge(RunTally.model_validate_json(path.read_bytes()))
        return merged


def _wait_for(children: list[subprocess.Popen], job: Job) -> None:
    """Wait for every worker process, passing a stop request on to them. One that failed fails the run: with its own
    exit code where each has said why (on stderr), or, killed by a signal, with the cause found on the broker."""

    def pass_on(signum: int) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    try:
        with stopping(pass_on):
            codes = [child.wait() for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    killed = [code for code in codes if code < 0]
    if killed:
        raise crash_cause(job, -killed[0])
    failed = {code for code in codes if code}
    if failed:
        raise WorkerFailed(failed.pop() if len(failed) == 1 else 1)


def resume_blocker(job: Job) -> str | None:
    """Why a run stopped now could not be resumed from its recovery store: an input topic gone (its offsets refer to
    the lost topic), or a broker that does not answer; None when nothing stands in the way."""
    if job.recovery is None or not isinstance(job.input, KafkaInput):
        return None
    try:
        gone = lost_topics(kafka_of(job, job.input), job.input.topics)
    except ConnectorError as err:
        return f"{err}: a resume from {job.recovery} goes on once it answers with topic(s) {', '.join(map(repr, job.input.topics))}"
    return gone_message(gone[0], job.input.bootstrap) if gone else None


def crash_cause(job: Job, signum: int) -> FairstreamError:
    """Why a worker process was killed by a signal: a topic the job reads or writes that is gone (librdkafka crashes on
    some brokers' answers about a deleted topic), else the signal itself."""
    name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else f"signal {signum}"
    ends = [(end, kind) for end, kind in ((job.input, "input"), (job.output, "output")) if isinstance(end, KafkaInput | KafkaOutput)]
    for end, kind in ends:
        topics = end.topics if isinstance(end, KafkaInput) else [end.alerts]  # type: ignore[union-attr]
        try:
            gone = lost_topics(kafka_of(job, end), topics)
        except ConnectorError as err:
            return ConnectorError(f"a worker process was killed by {name}, and {err}")
        if gone:
            return ConnectorError(gone_message(gone[0], end.bootstrap, kind))
    return FairstreamError(f"a worker process was killed by {name}; the run's records up to its last snapshot are kept (see --recovery)")


class WorkerFailed(FairstreamError):
    """A worker process failed and said why itself: the run ends with its exit code and no further line."""

    def __init__(self, exit_code: int):
        super().__init__("")
        self.exit_code = exit_code
