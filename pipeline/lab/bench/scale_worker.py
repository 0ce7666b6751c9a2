"""One process of a `fairstream bench scale` run: `python -m fairstream.lab.bench.scale_worker JOB_JSON ADDRESSES INDEX`.

It builds the job's dataflow as `fairstream run --processes` does and prints, as JSON, when the run started (the first
input partition built, which bytewax does once every process of the cluster has connected: connecting alone can take
a second of retries) and ended (wall clock), and the CPU seconds the process spent meanwhile, all its threads counted.
"""

from __future__ import annotations

import resource
import sys
import time
from typing import Any

import orjson

from fairstream.dataflow import collector
from fairstream.engine.api import FixedPartitionedSource, StatefulSourcePartition, cluster_main
from fairstream.runner import Job, job_flow


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class StartProbe(FixedPartitionedSource):
    """The job's source, noting when the dataflow first builds a partition of it (and the CPU time spent until then)."""

    def __init__(self, source: FixedPartitionedSource):
        self.source = source
        self.started: tuple[float, float] | None = None

    def list_parts(self) -> list[str]:
        return self.source.list_parts()

    def build_part(self, step_id: str, for_part: str, resume_state: Any) -> StatefulSourcePartition:
        if self.started is None:
            self.started = time.time(), cpu_seconds()
        return self.source.build_part(step_id, for_part, resume_state)


def main(job_json: str, addresses: str, index: str) -> None:
    probes: list[StartProbe] = []

    def probe(source: FixedPartitionedSource) -> StartProbe:
        probes.append(StartProbe(source))
        return probes[-1]

    flow = job_flow(Job.model_validate_json(job_json), wrap_source=probe)
    collector.settle()
    called = time.time(), cpu_seconds()
    cluster_main(flow, addresses.split(";"), int(index), worker_count_per_proc=1)
    ended = time.time()
    started, cpu = probes[0].started or called  # a process given no partition starts when the cluster does
    print(orjson.dumps({"started": started, "ended": ended, "cpu": cpu_seconds() - cpu}).decode())


if __name__ == "__main__":
    main(*sys.argv[1:])
