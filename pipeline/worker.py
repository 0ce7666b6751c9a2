"""One process of a multi-process run: `python -m pipeline.worker JOB_JSON ADDRESSES INDEX WORKERS`."""

import sys

from pipeline.cli import console
from pipeline.cli.errors import reports_errors
from pipeline.runner import Job, run_worker


@reports_errors
def main(argv: list[str]) -> None:
    job_json, addresses, index, workers = argv
    run_worker(Job.model_validate_json(job_json), addresses.split(";"), int(index), int(workers))


if __name__ == "__main__":
    console.show_warnings()
    main(sys.argv[1:])
