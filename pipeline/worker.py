"""One process of a multi-process file run: `python -m pipeline.worker SPEC INPUT FORMAT OUT ADDRESSES INDEX WORKERS`."""

import sys

from bytewax.testing import cluster_main

from pipeline.runner import file_flow
from pipeline.spec.load import load_plan


def main(argv: list[str]) -> None:
    spec, input_path, fmt, out, addresses, index, workers = argv
    flow = file_flow(load_plan(spec), input_path, fmt, out)  # type: ignore[arg-type]
    cluster_main(flow, addresses.split(";"), int(index), worker_count_per_proc=int(workers))


if __name__ == "__main__":
    main(sys.argv[1:])
