"""One process of a `fairstream bench scale` run: `python -m fairstream.bench.scale_worker JOB_JSON ADDRESSES INDEX`.

It builds the job's dataflow as `fairstream run --processes` does, then times only the run itself and prints, as JSON,
when it started and ended (wall clock) and the CPU seconds the process spent meanwhile, all its threads counted.
"""

from __future__ import annotations

import resource
import sys
import time

import orjson
from bytewax.testing import cluster_main

from fairstream import collector
from fairstream.runner import Job, job_flow


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(job_json: str, addresses: str, index: str) -> None:
    flow = job_flow(Job.model_validate_json(job_json))
    collector.settle()
    cpu, started = cpu_seconds(), time.time()
    cluster_main(flow, addresses.split(";"), int(index), worker_count_per_proc=1)
    ended = time.time()
    print(orjson.dumps({"started": started, "ended": ended, "cpu": cpu_seconds() - cpu}).decode())


if __name__ == "__main__":
    main(*sys.argv[1:])
