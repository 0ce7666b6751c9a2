"""One timed flow in a fresh process: `python -m fairstream.lab.bench.measure FLOW SPEC INPUT` prints its measurement as JSON.

FLOW is `passthrough` (read + parse into a counting sink, the ceiling), `monitor` (the full dataflow) or `hand` (the
hand-written single loop of the same computation, `hand_loop.py`). Only `run_main` (or the loop) is timed; peak RSS is
this process's, so each flow is measured alone. The monitor and the loop report their daily gaps, to be compared.
"""

from __future__ import annotations

import resource
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import orjson

from fairstream.compiler.load import load_plan
from fairstream.compiler.plan import Plan
from fairstream.connectors.files import RecordSource, jsonl_blocks
from fairstream.dataflow import collector
from fairstream.dataflow.flow import build_flow
from fairstream.dataflow.local import WorkingSource
from fairstream.engine.api import Dataflow, op, run_main
from fairstream.lab.bench.hand_loop import daily_gaps
from fairstream.lab.bench.sink import CountingSink
from fairstream.reading.parse import RecordParser
from fairstream.reading.typed import TypedParser
from fairstream.records.envelope import ESTIMATE
from fairstream.records.events import RawRecord
from fairstream.records.timefmt import format_instant

GAP_PARTS = ("false_positive_rate", "true_positive_rate")
"""The parts of equalized odds whose daily gaps the monitor and the hand-written loop are compared on."""

FLOWS = ("passthrough", "monitor", "hand")


class CountedRecords:
    """Wraps a factory of blocks of JSON lines (`jsonl_blocks`) and counts the lines handed out (the same for both flows)."""

    def __init__(self, open_records: Callable[[], Iterable[Any]]):
        self._open_records = open_records
        self.count = 0

    def __call__(self) -> Iterator[bytes]:
        for block in self._open_records():
            self.count += block.count(b"\n")
            yield block


def tally_parsed(counts: Counter, item: Any) -> None:
    """A parse-step item `("p<partition>", (partition, events, dead, …))`: count its events and dead letters."""
    batch = item[1]
    counts["events"] += len(batch[1])
    counts["dead_letters"] += len(batch[2])


class RecordTally:
    """Output records: counted by type, with the closed-trial count of the latest estimate and every estimate's gaps."""

    def __init__(self) -> None:
        self.gaps: dict[str, list[float | None]] = {}

    def __call__(self, counts: Counter, record: dict[str, Any]) -> None:
        counts[record["type"]] += 1
        if record["type"] == ESTIMATE:
            counts["trials_closed"] = record["trials"]["closed"]
            parts = record["parts"]
            self.gaps[record["event_time"]] = [parts.get(part, {}).get("gap") for part in GAP_PARTS]


class ParseOnly:
    """A partition's read and parse step as `fairstream run` does it before its clock (a block of lines decoded at once
    where it can be), each batch handed on as `("p<partition>", (partition, events, dead letters, False))`."""

    def __init__(self, parser: RecordParser | TypedParser, partition: int):
        self._parse = parser.parse_columns if isinstance(parser, TypedParser) else parser.parse_batch
        self._key = f"p{partition}"
        self._partition = partition

    def receive(self, raws: Sequence[RawRecord]) -> list[Any]:
        events, dead, _markers = self._parse(raws)  # type: ignore[arg-type]
        return [(self._key, (self._partition, events, dead, False))]

    def finish(self) -> list[Any]:
        return []

    def snapshot(self) -> None:
        return None

    def restore(self, _state: None) -> ParseOnly:
        return self


def passthrough_flow(plan: Plan, source: RecordSource, sink: CountingSink) -> Dataflow:
    """The monitor's own read and parse steps, straight into the sink."""
    flow = Dataflow("passthrough")
    parser = plan.parser(strings=False)
    op.output("count", op.input("read", flow, WorkingSource(source, lambda partition: ParseOnly(parser, partition))), sink)
    return flow


def measure(flow_name: str, spec: str, input_path: str) -> dict[str, Any]:
    """Run one flow over the JSON-lines input (the source `fairstream run` uses); return its time, events read, RSS and counts."""
    if flow_name == "hand":
        return _measure_hand(input_path)
    plan = load_plan(spec)
    records = CountedRecords(jsonl_blocks(input_path))
    source = RecordSource(records, blocks=True)
    gaps: dict[str, list[float | None]] = {}
    if flow_name == "passthrough":
        sink = CountingSink(tally_parsed)
        flow = passthrough_flow(plan, source, sink)
    else:
        tally = RecordTally()
        sink, gaps = CountingSink(tally), tally.gaps
        flow = build_flow(plan, source, sink)
    collector.settle()  # as `fairstream run` does
    rss_before = peak_rss_kib()
    started = time.perf_counter()
    run_main(flow)
    seconds = time.perf_counter() - started
    return {
        "flow": flow_name,
        "events": records.count,
        "seconds": seconds,
        "rss_before_kib": rss_before,
        "peak_rss_kib": peak_rss_kib(),
        "counts": dict(sink.counts),
        "gaps": gaps,
    }


def _measure_hand(input_path: str) -> dict[str, Any]:
    """The hand-written loop over the same file, timed the same way."""
    rss_before = peak_rss_kib()
    started = time.perf_counter()
    with open(input_path, "rb") as handle:
        gaps, violations, rejected = daily_gaps(handle)
    seconds = time.perf_counter() - started
    with open(input_path, "rb") as handle:
        events = sum(1 for _ in handle)
    return {
        "flow": "hand",
        "events": events,
        "seconds": seconds,
        "rss_before_kib": rss_before,
        "peak_rss_kib": peak_rss_kib(),
        "counts": {"days": len(gaps), "violated_days": violations, "rejected": rejected},
        "gaps": {format_instant(day): list(pair) for day, pair in gaps.items()},
    }


def peak_rss_kib() -> int:
    """This process's peak resident set in KiB: VmHWM, which starts afresh at exec (`ru_maxrss` keeps the parent's peak across it)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv: list[str]) -> None:
    flow_name, spec, input_path = argv
    if flow_name not in FLOWS:
        raise SystemExit(f"FLOW must be one of {', '.join(FLOWS)}; got {flow_name!r}")
    sys.stdout.buffer.write(orjson.dumps(measure(flow_name, spec, input_path)) + b"\n")


if __name__ == "__main__":
    main(sys.argv[1:])
