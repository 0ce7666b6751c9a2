"""One process of a multi-process run: `python -m fairstream.dataflow.worker JOB_JSON ADDRESSES INDEX WORKERS TALLY_PATH`."""

import sys
from pathlib import Path

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.runner import Job, run_worker


@reports_errors
def main(argv: list[str]) -> None:
    job_json, addresses, index, workers, tally_path = argv
    run_worker(Job.model_validate_json(job_json), addresses.split(";"), int(index), int(workers), Path(tally_path))


if __name__ == "__main__":
    console.show_warnings()
    main(sys.argv[1:])
