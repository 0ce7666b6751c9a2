"""Scale-out: the same keyed input — files split by key, and a Kafka topic keyed by it — monitored by 1, 2, … processes
(one worker each, bytewax's own cluster over loopback), each count in fresh processes; events/s, speedup against one
process, cores busy, and whether every count wrote the one-process outputs.

A run's time is from the moment its last process starts reading (imports done, dataflow built, cluster connected) to
the moment its last process ends, as `bench throughput` times `run_main` only; cores busy is the CPU time of all its
processes over that time.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.broker import free_ports, kafka_or_local
from fairstream.connectors.kafka import dead_letter_topic, estimates_topic
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.connectors.replay import EventFields, replay
from fairstream.connectors.split import split_records
from fairstream.connectors.synthetic.compas_like import compas_like_events
from fairstream.paths import SPECS_DIR
from fairstream.records.errors import ConnectorError, FairstreamError, InputError
from fairstream.runner import FileInput, FileOutput, FileRun, Job, KafkaInput, KafkaOutput, prepare

SPEC = str(SPECS_DIR / "compas_equalized_odds.yaml")
PER_DAY = 250.0
"""Screenings a day in streams up to a million events; longer streams are denser (`per_day`) so that they still end
before today, where an event would be a `future` dead letter whose detail names the wall clock."""
SEED = 2013
FAMILIES = ("alerts", "estimates", "dead_letters")


def per_day(events: int) -> float:
    """Screenings a day for a stream of `events` events: 250, or more so that it spans at most about seven years."""
    return max(PER_DAY, events / 2000)


@dataclass(frozen=True)
class ScaleRun:
    """One process count on one input path."""

    path: str
    processes: int
    events: int
    seconds: float
    cpu_seconds: float
    identical: bool
    """Whether its alerts, estimates and dead letters equal the one-process file run's (emission times aside)."""

    @property
    def rate(self) -> float:
        return self.events / self.seconds

    @property
    def cores_busy(self) -> float:
        return self.cpu_seconds / self.seconds


@dataclass(frozen=True)
class ScaleResult:
    events: int
    partitions: int
    runs: tuple[ScaleRun, ...]

    def speedup(self, run: ScaleRun) -> float:
        """Events/s against the one-process run on the same path."""
        base = next(other for other in self.runs if other.path == run.path and other.processes == 1)
        return run.rate / base.rate

    def at_most(self) -> dict[str, float]:
        """Per path, the speedup at the largest process count run."""
        largest = max(run.processes for run in self.runs)
        return {run.path: self.speedup(run) for run in self.runs if run.processes == largest}


def measure_scale(
    events: int = 1_000_000,
    partitions: int = 2,
    processes: tuple[int, ...] = (1, 2),
    *,
    kafka: bool = True,
    bootstrap: str | None = None,
    kafka_config: str | None = None,
    on_step: Callable[[str], None] = lambda _step: None,
) -> ScaleResult:
    """Generate `events` COMPAS-shaped events, split them by key into `partitions` files (and a topic of as many
    partitions), and monitor them at each process count."""
    if events < 1 or partitions < 1 or not processes or min(processes) < 1:
        raise InputError(f"events, partitions and process counts must be at least 1; got {events}, {partitions}, {processes}")
    counts = sorted(set(processes) | {1})
    runs: list[ScaleRun] = []
    with tempfile.TemporaryDirectory(prefix="fairstream-scale-") as scratch:
        on_step(f"generating {events:,} COMPAS-shaped events into {partitions} files by key")
        stream = list(itertools.islice(compas_like_events(events, SEED, per_day=per_day(events)), events))
        files = [str(path) for path, _ in split_records(stream, lambda event: event["id"], Path(scratch) / "parts", partitions)]
        reference: dict[str, Any] | None = None
        for count in counts:
            on_step(f"files: {count} process(es) over {partitions} files")
            out = Path(scratch) / f"out-{count}"
            job = Job(spec=SPEC, input=FileInput(path=files, format="jsonl"), output=FileOutput(out_dir=str(out)))
            seconds, cpu = _run(job, count)
            got = _file_outputs(out)
            reference = reference or got
            runs.append(ScaleRun("files", count, events, seconds, cpu, got == reference))
        if kafka:
            runs.extend(_kafka_runs(stream, partitions, counts, bootstrap, kafka_config, reference, on_step))
    return ScaleResult(events, partitions, tuple(runs))


def _kafka_runs(
    stream: list[dict[str, Any]],
    partitions: int,
    counts: list[int],
    bootstrap: str | None,
    kafka_config: str | None,
    reference: dict[str, Any] | None,
    on_step: Callable[[str], None],
) -> list[ScaleRun]:
    """The process counts over a topic keyed by id; `reference` is the one-process file run's outputs, which every
    Kafka run must equal as well."""
    topic = f"bench-scale-{int(time.time() * 1000)}"
    runs: list[ScaleRun] = []
    with kafka_or_local(bootstrap, kafka_config) as servers:
        on_step(f"kafka: replaying {len(stream):,} events into {partitions} partitions keyed by id")
        replay(stream, servers, topic, fields=EventFields("id", "date"), partitions=partitions)
        for count in counts:
            on_step(f"kafka: {count} process(es) over {partitions} partitions")
            alerts = f"{topic}-alerts-{count}"
            job = Job(
                spec=SPEC,
                input=KafkaInput(bootstrap=servers.bootstrap, topics=[topic], tail=False),
                output=KafkaOutput(bootstrap=servers.bootstrap, alerts=alerts),
                kafka_config=kafka_config,
            )
            seconds, cpu = _run(job, count)
            got = _kafka_outputs(servers, alerts)
            reference = reference or got
            runs.append(ScaleRun("kafka", count, len(stream), seconds, cpu, got == reference))
    return runs


def _run(job: Job, processes: int) -> tuple[float, float]:
    """Run the job on `processes` fresh processes; return the run's seconds (last ready to last done) and CPU seconds."""
    prepare(job)
    addresses = ";".join(f"127.0.0.1:{port}" for port in free_ports(processes))
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "fairstream.lab.bench.scale_worker", job.model_dump_json(), addresses, str(index)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(processes)
    ]
    reports = []
    for child in children:
        out, err = child.communicate()
        if child.returncode != 0:
            tail = "\n".join(err.strip().splitlines()[-5:])
            raise FairstreamError(f"a scale benchmark process failed (exit code {child.returncode}):\n{tail}")
        reports.append(orjson.loads(out.strip().splitlines()[-1]))
    seconds = max(report["ended"] for report in reports) - max(report["started"] for report in reports)
    return seconds, sum(report["cpu"] for report in reports)


def _comparable(records: list[dict[str, Any]]) -> list[Any]:
    """Emission times aside; dead letters and Kafka outputs of several processes in any order."""
    stripped = [{name: value for name, value in record.items() if name != "emitted_at"} for record in records]
    return sorted(stripped, key=lambda record: orjson.dumps(record, option=orjson.OPT_SORT_KEYS))


def _file_outputs(out: Path) -> dict[str, Any]:
    run = FileRun(out)
    return {family: _comparable(run.read(f"{family}.jsonl")) for family in FAMILIES}


def _kafka_outputs(kafka: KafkaConnection, alerts: str) -> dict[str, Any]:
    topics = {"alerts": alerts, "estimates": estimates_topic(alerts), "dead_letters": dead_letter_topic(alerts)}
    found: dict[str, Any] = {}
    for family, topic in topics.items():
        try:
            records = list(subscribe(kafka, topic, poll_seconds=0.5))
        except ConnectorError:
            records = []
        found[family] = _comparable(records)
    return found
