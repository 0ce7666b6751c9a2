"""The bytewax dataflow: wiring of the pure pieces, source and sink passed in (no logic of its own)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from typing import Any

import bytewax.operators as op
from bytewax.dataflow import Dataflow, Stream
from bytewax.inputs import Source
from bytewax.operators import StatefulLogic
from bytewax.outputs import Sink

from fairstream import metrics
from fairstream.events import IDLE, DeadLetter, Event, RawRecord
from fairstream.lifecycle import stop_requested
from fairstream.monitor import Monitor
from fairstream.parse import RecordParser
from fairstream.spec.plan import Plan
from fairstream.trials.bucket import Bucket, Report
from fairstream.trials.clock import PartitionClock

log = logging.getLogger("fairstream.trials")

PartitionBatch = tuple[int, list[Event], list[DeadLetter], bool]
"""(input partition, its events in order, its dead letters, whether the partition reported itself idle)."""


class ParseBatch:
    """Parses a source batch and groups it by input partition, keeping each partition's order."""

    def __init__(self, parser: RecordParser):
        self._parse = parser.parse

    def __call__(self, batch: list[RawRecord]) -> list[tuple[str, PartitionBatch]]:
        groups: dict[int, tuple[int, list[Event], list[DeadLetter]]] = {}
        idle: set[int] = set()
        for raw in batch:
            if raw.offset == IDLE:
                idle.add(raw.partition)
                continue
            item = self._parse(raw)
            group = groups.get(raw.partition)
            if group is None:
                group = groups[raw.partition] = (raw.partition, [], [])
            (group[1] if type(item) is Event else group[2]).append(item)
        out = [(f"p{partition}", (*group, False)) for partition, group in groups.items()]
        out.extend((f"p{partition}", (partition, [], [], True)) for partition in sorted(idle - groups.keys()))
        return out


class ClockStep(StatefulLogic):
    """Dead-letters late events and sends each bucket its events plus the partition's latest event time."""

    def __init__(self, clock: PartitionClock, buckets: int):
        self.clock = clock
        self.buckets = buckets

    def on_item(self, value: PartitionBatch) -> tuple[list[tuple[Any, ...]], bool]:
        partition, events, dead, idle = value
        clock = self.clock
        clock.partition = partition
        if idle:
            return [("bucket", f"b{bucket}", (bucket, partition, [], clock.high, True)) for bucket in range(self.buckets)], StatefulLogic.RETAIN
        before = clock.high
        accepted, late = clock.admit(events)
        metrics.read(partition, len(events) + len(dead), clock.high)
        out: list[tuple[Any, ...]] = [("dead", letter) for letter in clock.count(dead, late)]
        routed = clock.route(accepted, self.buckets)
        high = clock.high
        for bucket in range(self.buckets) if high != before else sorted(routed):
            out.append(("bucket", f"b{bucket}", (bucket, partition, routed.get(bucket, []), high, False)))
        return out, StatefulLogic.RETAIN

    def snapshot(self) -> PartitionClock:
        return copy.copy(self.clock)


class BucketStep(StatefulLogic):
    def __init__(self, bucket: Bucket, monitor: str):
        self.bucket = bucket
        self.monitor = monitor

    def on_item(self, value: tuple[int, int, list[Event], int | None, bool]) -> tuple[list[Report], bool]:
        index, partition, events, high, idle = value
        bucket = self.bucket
        bucket.index = index
        warned = bucket.ever_evicted
        report = bucket.receive(partition, events, high, idle)
        metrics.open_trials(self.monitor, index, len(bucket.trials))
        if bucket.ever_evicted and not warned:
            log.warning(
                "trial bucket %d reached its %s open trials (trial.max_open / buckets): the trials that close first are dropped and counted as evicted",
                index, f"{bucket.max_open:,}",
            )  # fmt: skip
        return ([report] if report is not None else []), StatefulLogic.RETAIN

    def on_eof(self) -> tuple[list[Report], bool]:
        if stop_requested():  # stopped, not ended: the open trials wait in the snapshot for the resumed run
            return [], StatefulLogic.RETAIN
        report = self.bucket.finish()
        return ([report] if report is not None else []), StatefulLogic.RETAIN

    def snapshot(self) -> Bucket:
        return self.bucket.snapshot()


class MergeStep(StatefulLogic):
    def __init__(self, monitor: Monitor):
        self.monitor = monitor

    def on_item(self, value: Report) -> tuple[list[dict[str, Any]], bool]:
        return self.monitor.receive(value), StatefulLogic.RETAIN

    def snapshot(self) -> Monitor:
        config = self.monitor.config  # immutable: shared, not copied
        return copy.deepcopy(self.monitor, {id(config): config})


def parsed_stream(flow: Dataflow, plan: Plan, source: Source, *, strings: bool) -> Stream[tuple[str, PartitionBatch]]:
    """Read and validate: the part the passthrough benchmark shares with the monitor."""
    raw = op.input("read", flow, source)  # RawRecord
    return op.flat_map_batch("parse", raw, ParseBatch(plan.parser(strings=strings)))  # ("p<partition>", PartitionBatch)


def build_flow(
    plans: Plan | Sequence[Plan],
    source: Source,
    sink: Sink,
    *,
    partitions: int = 1,
    strings: bool = False,
    encode: Callable[[dict[str, Any]], Any] | None = None,
) -> Dataflow:
    """Source → parse → per-partition clock → trial buckets → per-monitor merge → sink, for one monitor or several.

    Several monitors (plans whose input, dead-letter and bucket sections agree, see `load_plans`) share the reading,
    parsing and clock, so each event is read and parsed once; each monitor has its own trial buckets and merge.
    `partitions` is the number of input partitions the watermark waits for; `strings` converts text values (CSV)
    to the declared types; `encode` turns each output record (a dict) into the sink's item.
    """
    plans = [plans] if isinstance(plans, Plan) else list(plans)
    first = plans[0]
    spec = first.spec
    flow = Dataflow(spec.monitor.replace(".", "_"))
    parsed = parsed_stream(flow, first, source, strings=strings)
    buckets = spec.buckets

    def clock_logic(resume: PartitionClock | None) -> ClockStep:
        return ClockStep(resume or new_clock(first), buckets)

    clocked = op.key_rm("unkey-clock", op.stateful("clock", parsed, clock_logic))
    # ("dead", DeadLetter) | ("bucket", "b<i>", (i, partition, [Event], high, idle))
    split = op.branch("split-dead", clocked, lambda item: item[0] == "dead")
    dead = op.map("dead-record", split.trues, lambda item: item[1].to_json())
    to_buckets = op.map("key-bucket", split.falses, lambda item: item[1:])  # ("b<i>", (i, partition, [Event], high, idle))
    monitored = [_monitor_steps(plan, to_buckets, partitions, "" if len(plans) == 1 else f"_{plan.spec.monitor.replace('.', '_')}") for plan in plans]
    out = op.inspect("observe", op.merge("outputs", *monitored, dead), observe)
    if encode is not None:
        out = op.map("encode", out, encode)
    op.output("write", out, sink)
    return flow


def observe(_step_id: str, record: dict[str, Any]) -> None:
    """Count an output record in the job's metrics."""
    metrics.observe(record)


def _monitor_steps(plan: Plan, to_buckets: Stream[tuple[str, Any]], partitions: int, suffix: str) -> Stream[dict[str, Any]]:
    """One monitor's trial buckets and merge over the shared bucket stream; `suffix` keeps the step ids of several apart."""

    def bucket_logic(resume: Bucket | None) -> BucketStep:
        return BucketStep(resume or new_bucket(plan, partitions), plan.spec.monitor)

    def monitor_logic(resume: Monitor | None) -> MergeStep:
        return MergeStep(resume or Monitor(plan.monitor))

    reports = op.stateful(f"trials{suffix}", to_buckets, bucket_logic)  # ("b<i>", Report)
    to_monitor = op.map(f"key-monitor{suffix}", reports, lambda item: ("monitor", item[1]))
    return op.key_rm(f"unkey-monitor{suffix}", op.stateful(f"monitor{suffix}", to_monitor, monitor_logic))  # record dict


def new_clock(plan: Plan) -> PartitionClock:
    """A partition's clock as the spec's input section sets it (the partition is set by each batch)."""
    schema = plan.spec.input
    return PartitionClock(-1, schema.lateness, max_future=schema.max_future, max_ahead=schema.max_ahead, letter_record=plan.letter_record)


def new_bucket(plan: Plan, partitions: int) -> Bucket:
    spec = plan.spec
    return Bucket(
        max_open=-(-spec.trial.max_open // spec.buckets),
        index=-1,
        layout=plan.layout,
        outcomes=plan.outcomes,
        partitions=partitions,
        lateness=spec.input.lateness,
        tick=plan.monitor.tick,
        keep_trials=plan.monitor.needs_trials,
    )
