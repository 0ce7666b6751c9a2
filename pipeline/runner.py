"""Run a monitor over a file: in this process (one or more worker threads) or as several cooperating processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Literal

import orjson
from bytewax.testing import cluster_main, run_main

from connectors.compas import compas_records
from connectors.files import OUTPUT_FILES, RecordSource, csv_rows, jsonl_lines, output_sink
from pipeline.errors import FairstreamError
from pipeline.flow import build_flow
from pipeline.spec.load import load_plan
from pipeline.spec.plan import Plan

InputFormat = Literal["compas", "csv", "jsonl"]
FORMATS: tuple[InputFormat, ...] = ("compas", "csv", "jsonl")

_FILE_OF_TYPE = {"fairness.estimate": "estimates.jsonl", "pipeline.dead_letter": "dead_letters.jsonl"}


def guess_format(path: str | Path) -> InputFormat:
    """The input format from the file name: COMPAS for ProPublica's file, else by extension."""
    name = Path(path).name.lower()
    if name.startswith("compas-scores"):
        return "compas"
    if name.endswith(".csv"):
        return "csv"
    return "jsonl"


def records_of(path: str | Path, fmt: InputFormat) -> Callable[[], Iterable[Any]]:
    """A factory of the raw records of an input file in the given format."""
    if fmt == "compas":
        return compas_records(path)
    if fmt == "csv":
        return csv_rows(path)
    return jsonl_lines(path)


def encode_for_files(record: dict[str, Any]) -> tuple[str, str]:
    """Route a record to its output file as one JSON line."""
    return _FILE_OF_TYPE.get(record["type"], "alerts.jsonl"), orjson.dumps(record).decode()


def file_flow(plan: Plan, input_path: str | Path, fmt: InputFormat, out_dir: str | Path, batch_size: int = 1000):
    """The dataflow that reads one input file and writes the three JSON-lines outputs into `out_dir`."""
    source = RecordSource(records_of(input_path, fmt), batch_size=batch_size)
    return build_flow(plan, source, output_sink(out_dir), strings=fmt == "csv", encode=encode_for_files)


@dataclass(frozen=True)
class FileRun:
    """Where a run wrote its outputs."""

    out_dir: Path

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
) -> FileRun:
    """Monitor one input file; with `processes > 1` the flow runs as that many cooperating processes."""
    plan = load_plan(spec_path)
    fmt = fmt or guess_format(input_path)
    records_of(input_path, fmt)  # fail fast on a missing or malformed input
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in OUTPUT_FILES:
        (out / name).unlink(missing_ok=True)
    if processes <= 1:
        flow = file_flow(plan, input_path, fmt, out)
        if workers <= 1:
            run_main(flow)
        else:
            cluster_main(flow, [], 0, worker_count_per_proc=workers)
    else:
        _run_processes(spec_path, input_path, fmt, out, workers, processes)
    return FileRun(out)


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _run_processes(spec_path, input_path, fmt: str, out: Path, workers: int, processes: int) -> None:
    addresses = ";".join(f"127.0.0.1:{port}" for port in _free_ports(processes))
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "pipeline.worker", str(spec_path), str(input_path), fmt, str(out), addresses, str(index), str(workers)],
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        for index in range(processes)
    ]
    codes = [child.wait() for child in children]
    if any(codes):
        raise FairstreamError(f"a worker process failed (exit codes {codes})")
