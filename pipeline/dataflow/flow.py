"""The bytewax dataflow: wiring of the pure pieces, source and sink passed in (no logic of its own)."""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any

from fairstream.compiler.plan import Plan
from fairstream.dataflow.job import job_alarm, joining
from fairstream.dataflow.local import WorkingSource
from fairstream.engine.api import Dataflow, FixedPartitionedSource, Sink, StatefulLogic, Stream, op
from fairstream.monitor import Monitor
from fairstream.process.lifecycle import stop_requested
from fairstream.process.telemetry import SILENT, Telemetry
from fairstream.records.chain import combined_hash
from fairstream.records.events import DeadLetter, Event, Sealed
from fairstream.trials.bucket import Bucket, Recipient, Report
from fairstream.trials.clock import PartitionClock
from fairstream.trials.merge import TopicMerge
from fairstream.trials.partition import PartitionParse, PartitionTrials
from fairstream.trials.placement import partitions_of

log = logging.getLogger("fairstream.trials")

PartitionBatch = tuple[int, list[Event], list[DeadLetter], bool]
"""(input partition, its events in order, its dead letters, whether the partition reported itself idle)."""


class ClockStep(StatefulLogic):
    """Input that is not keyed: dead-letters a partition's late events and sends each trial bucket its events plus the
    partition's latest event time."""

    def __init__(self, clock: PartitionClock, buckets: int, telemetry: Telemetry = SILENT):
        self.clock = clock
        self.buckets = buckets
        self.telemetry = telemetry

    def on_item(self, value: PartitionBatch) -> tuple[list[tuple[Any, ...]], bool]:
        partition, events, dead, idle = value
        clock = self.clock
        clock.partition = partition
        if idle:  # quiet: nothing earlier is to be waited for
            held, letters = clock.release_all()
            routed = clock.route(held, self.buckets)
            dead = [("dead", letter) for letter in clock.count(letters)]
            return [*dead, *(("bucket", f"b{bucket}", (bucket, partition, routed.get(bucket, []), clock.high, True)) for bucket in range(self.buckets))], StatefulLogic.RETAIN
        before = clock.high
        accepted, late = clock.admit(events)
        self.telemetry.read(partition, len(events) + len(dead), clock.high)
        out: list[tuple[Any, ...]] = [("dead", letter) for letter in clock.count(dead, late)]
        routed = clock.route(accepted, self.buckets)
        high = clock.high
        for bucket in range(self.buckets) if high != before else sorted(routed):
            out.append(("bucket", f"b{bucket}", (bucket, partition, routed.get(bucket, []), high, False)))
        return out, StatefulLogic.RETAIN

    def on_eof(self) -> tuple[list[tuple[Any, ...]], bool]:
        if stop_requested():  # stopped, not ended: held events wait in the snapshot
            return [], StatefulLogic.RETAIN
        held, letters = self.clock.release_all()
        routed = self.clock.route(held, self.buckets)
        buckets = [("bucket", f"b{bucket}", (bucket, self.clock.partition, events, self.clock.high, False)) for bucket, events in sorted(routed.items())]
        dead = [("dead", letter) for letter in self.clock.count(letters)]
        return [*dead, *buckets, *(("dead", seal) for seal in self.clock.seal())], StatefulLogic.RETAIN

    def snapshot(self) -> PartitionClock:
        return self.clock.copy()


class BucketStep(StatefulLogic):
    """One trial bucket, its trials computed once for the monitors `members` (indices into the job's plans)."""

    def __init__(self, bucket: Bucket, monitors: list[str], members: list[int], telemetry: Telemetry = SILENT):
        self.bucket = bucket
        self.monitors = monitors
        self.members = members
        self.telemetry = telemetry

    def on_item(self, value: tuple[int, int, list[Event], int | None, bool]) -> tuple[list[tuple[int, Report]], bool]:
        index, partition, events, high, idle = value
        bucket = self.bucket
        bucket.index = index
        warned = bucket.ever_evicted
        reports = bucket.receive(partition, events, high, idle)
        for monitor in self.monitors:
            self.telemetry.open_trials(monitor, index, len(bucket.trials))
        if bucket.ever_evicted and not warned:
            log.warning(
                "trial bucket %d reached its %s open trials (trial.max_open / buckets): trials opened beyond it are not kept (counted as evicted in every estimate): the estimates count only the trials that opened while there was room",
                index, f"{bucket.max_open:,}",
            )  # fmt: skip
        return list(zip(self.members, reports)), StatefulLogic.RETAIN

    def on_eof(self) -> tuple[list[tuple[int, Report]], bool]:
        if stop_requested():  # stopped, not ended: the open trials wait in the snapshot for the resumed run
            return [], StatefulLogic.RETAIN
        return list(zip(self.members, self.bucket.finish())), StatefulLogic.RETAIN

    def snapshot(self) -> Bucket:
        return self.bucket.snapshot()


class MergeStep(StatefulLogic):
    def __init__(self, monitor: Monitor):
        self.monitor = monitor

    def on_item(self, value: Report) -> tuple[list[dict[str, Any]], bool]:
        return self.monitor.receive(value), StatefulLogic.RETAIN

    def snapshot(self) -> Monitor:
        configs = (self.monitor.config, *self.monitor.sharing)  # immutable: shared, not copied
        return copy.deepcopy(self.monitor, {id(config): config for config in configs})


def parsed_stream(
    flow: Dataflow, plan: Plan, source: FixedPartitionedSource, *, strings: bool, topics: Sequence[str] = ()
) -> Stream[tuple[str, PartitionBatch]]:
    """Read and validate, each partition where it is read: the part the passthrough benchmark shares with the monitor.
    A partition that reads several `topics` merges them in event time."""
    parser = plan.parser(strings=strings)
    return op.input("read", flow, WorkingSource(source, lambda partition: PartitionParse(parser, partition, new_merge(plan, topics))))  # ("p<partition>", PartitionBatch)


def new_merge(plan: Plan, topics: Sequence[str]) -> TopicMerge | None:
    """The event-time merge of a partition that reads several topics; None for one topic or files."""
    if len(topics) < 2:
        return None
    return TopicMerge(list(topics), plan.kind_rank)


def build_flow(
    plans: Plan | Sequence[Plan],
    source: FixedPartitionedSource,
    sink: Sink,
    *,
    partitions: int = 1,
    strings: bool = False,
    encode: Callable[[dict[str, Any]], Any] | None = None,
    topics: Sequence[str] = (),
    telemetry: Telemetry = SILENT,
) -> Dataflow:
    """Source → parse → clock → trials → per-monitor merge → sink, for one monitor or several.

    Keyed input (`input.keyed`, the default) keeps each partition's clock and trials in its source partition, on the
    worker that reads it, and sends only per-tick reports to the merges; other input is re-keyed into `buckets` trial
    buckets. Several monitors (plans whose input, dead-letter and bucket sections agree, see `load_plans`) share the
    reading, parsing and clock, so each event is read and parsed once; monitors whose trials agree as well (the metrics of
    one spec, see `trial_groups`) share their trial buckets, so each trial is folded once; each monitor has its own merge.
    `partitions` is the number of input partitions; `strings` converts text values (CSV) to the declared types;
    `encode` turns each output record (a dict) into the sink's item, or None for a record not to write; `topics` names
    the co-partitioned topics each source partition reads where there are several (their events are merged in event time);
    `telemetry` hears what is read, the open trials and every output record.
    """
    plans = job_members([plans] if isinstance(plans, Plan) else list(plans))
    flow = Dataflow(plans[0].spec.monitor.replace(".", "_"))
    if plans[0].spec.input.keyed:
        reports, dead = _partition_local(flow, plans, source, partitions, strings, topics, telemetry)
        reporters = partitions
    else:
        reports, dead = _bucketed(flow, plans, source, partitions, strings, topics, telemetry)
        reporters = plans[0].spec.buckets
    monitored = [
        _merge([plans[index] for index in group], reports[group[0]], reporters, "" if len(plans) == 1 else f"_{plans[group[0]].spec.monitor.replace('.', '_')}")
        for group in count_groups(plans)
    ]
    judged = job_alarm(plans, op.merge("monitored", *monitored))
    out = op.inspect("observe", op.merge("outputs", judged, dead), lambda _step, record: telemetry.observe(record))
    if encode is not None:
        out = op.filter_map("encode", out, encode)
    op.output("write", out, sink)
    return flow


def job_members(plans: Sequence[Plan]) -> list[Plan]:
    """The job's plans, those whose merged evidence joins the job's alarm (`joining`) told so."""
    members = joining(plans)
    return [dataclasses.replace(plan, monitor=dataclasses.replace(plan.monitor, joins_job=True)) if index in members else plan for index, plan in enumerate(plans)]


def merged_monitor(plans: Sequence[Plan], reporters: int) -> Monitor:
    """The merge of monitors whose counts agree (see `count_groups`), waiting for `reporters` reports of each tick."""
    config, *sharing = (dataclasses.replace(plan.monitor, reporters=reporters) for plan in plans)
    return Monitor(config, tuple(sharing))


def trial_groups(plans: Sequence[Plan]) -> list[list[int]]:
    """The job's plans (by index) grouped by the trials they count: plans whose trials agree (`Plan.shares_trials`) share
    one computation of them."""
    groups: list[list[int]] = []
    for index, plan in enumerate(plans):
        group = next((group for group in groups if plans[group[0]].shares_trials(plan)), None)
        if group is None:
            groups.append([index])
        else:
            group.append(index)
    return groups


def count_groups(plans: Sequence[Plan]) -> list[list[int]]:
    """The job's plans (by index) grouped by their counts: plans that share trials, turn them into the same cells and
    count them alike (`MonitorConfig.counts_like`) share one merge, counted once; only their verdicts are their own."""
    groups: list[list[int]] = []
    for index, plan in enumerate(plans):
        group = next(
            (
                group for group in groups
                if plans[group[0]].shares_trials(plan) and plans[group[0]].outcomes == plan.outcomes and plans[group[0]].monitor.counts_like(plan.monitor)
            ),
            None,
        )  # fmt: skip
        if group is None:
            groups.append([index])
        else:
            group.append(index)
    return groups


def new_partition_trials(
    plans: Sequence[Plan], partition: int, partitions: int, *, strings: bool, topics: Sequence[str] = (), telemetry: Telemetry = SILENT
) -> PartitionTrials:
    """What one input partition of keyed input keeps: its clock, the merge of its topics where it reads several and, per
    group of monitors whose trials agree, a bucket of its trials."""
    first = plans[0]
    clock = new_clock(plans)
    clock.partition = partition
    groups = trial_groups(plans)
    buckets = [new_bucket([plans[index] for index in group], partitions=1, share=partitions, index=partition) for group in groups]
    placement = partitions_of(first.spec.input.partitioner, partitions)
    monitors = [plan.spec.monitor for plan in plans]
    return PartitionTrials(first.parser(strings=strings), clock, buckets, groups, monitors, placement, new_merge(first, topics), telemetry)


def _partition_local(
    flow: Dataflow, plans: list[Plan], source: FixedPartitionedSource, partitions: int, strings: bool, topics: Sequence[str], telemetry: Telemetry
) -> tuple[list[Stream[Report]], Stream[dict[str, Any]]]:
    """Each partition parses, clocks and folds its own trials where it is read; per monitor, the stream of its reports."""

    def work(partition: int) -> PartitionTrials:
        return new_partition_trials(plans, partition, partitions, strings=strings, topics=topics, telemetry=telemetry)

    read = op.input("read", flow, WorkingSource(source, work))
    split = op.branch("split-dead", read, lambda item: type(item) is DeadLetter or type(item) is Sealed)  # DeadLetter | Sealed | (monitor index, Report)
    dead = op.map("dead-record", split.trues, lambda item: item.to_json())
    if len(plans) == 1:
        return [op.map("report", split.falses, lambda item: item[1])], dead
    return [
        op.filter_map(f"report_{plan.spec.monitor.replace('.', '_')}", split.falses, lambda item, index=index: item[1] if item[0] == index else None)
        for index, plan in enumerate(plans)
    ], dead


def _bucketed(
    flow: Dataflow, plans: list[Plan], source: FixedPartitionedSource, partitions: int, strings: bool, topics: Sequence[str], telemetry: Telemetry
) -> tuple[list[Stream[Report]], Stream[dict[str, Any]]]:
    """Input that is not keyed: a clock per partition, then every event re-keyed into the trial bucket of its key."""
    first = plans[0]
    buckets = first.spec.buckets

    def clock_logic(resume: PartitionClock | None) -> ClockStep:
        return ClockStep(resume or new_clock(plans), buckets, telemetry)

    clocked = op.key_rm("unkey-clock", op.stateful("clock", parsed_stream(flow, first, source, strings=strings, topics=topics), clock_logic))
    # ("dead", DeadLetter) | ("bucket", "b<i>", (i, partition, [Event], high, idle))
    split = op.branch("split-dead", clocked, lambda item: item[0] == "dead")
    dead = op.map("dead-record", split.trues, lambda item: item[1].to_json())
    to_buckets = op.map("key-bucket", split.falses, lambda item: item[1:])  # ("b<i>", (i, partition, [Event], high, idle))
    reports: dict[int, Stream[Report]] = {}
    for group in trial_groups(plans):
        members = [plans[index] for index in group]
        suffix = "" if len(plans) == 1 else f"_{members[0].spec.monitor.replace('.', '_')}"

        def bucket_logic(resume: Bucket | None, members: list[Plan] = members, group: list[int] = group) -> BucketStep:
            return BucketStep(resume or new_bucket(members, partitions), [plan.spec.monitor for plan in members], group, telemetry)

        shared = op.key_rm(f"unkey-trials{suffix}", op.stateful(f"trials{suffix}", to_buckets, bucket_logic))  # (monitor index, Report)
        for index in group:
            step = "report" if len(plans) == 1 else f"report_{plans[index].spec.monitor.replace('.', '_')}"
            reports[index] = op.filter_map(step, shared, lambda item, index=index: item[1] if item[0] == index else None)
    return [reports[index] for index in range(len(plans))], dead


def _merge(plans: list[Plan], reports: Stream[Report], reporters: int, suffix: str) -> Stream[dict[str, Any]]:
    """The merge of the reports of monitors whose counts agree (one monitor, or several: see `count_groups`), counted
    once and judged by each; `suffix` keeps the step ids of several merges apart."""
    def monitor_logic(resume: Monitor | None) -> MergeStep:
        return MergeStep(resume or merged_monitor(plans, reporters))

    keyed = op.map(f"key-monitor{suffix}", reports, lambda report: ("monitor", report))
    return op.key_rm(f"unkey-monitor{suffix}", op.stateful(f"monitor{suffix}", keyed, monitor_logic))  # record dict


def new_clock(plans: Sequence[Plan]) -> PartitionClock:
    """A partition's clock as the specs' (shared) input section sets it (the partition is set by each batch)."""
    plan = plans[0]
    schema = plan.spec.input
    return PartitionClock(
        -1, schema.lateness, max_future=schema.max_future, max_ahead=schema.max_ahead, max_gap=schema.max_gap,
        letter_record=plan.letter_record, kind_rank=plan.kind_rank,
        spec_sha256=combined_hash([each.sha256 for each in plans]),
    )  # fmt: skip


def new_bucket(plans: Sequence[Plan], partitions: int, *, share: int | None = None, index: int = -1) -> Bucket:
    """A trial bucket for monitors whose trials agree, fed by `partitions` input partitions, holding 1 / `share` of
    `trial.max_open` (default: of the buckets)."""
    first = plans[0]
    spec = first.spec
    return Bucket(
        max_open=-(-spec.trial.max_open // (share or spec.buckets)),
        index=index,
        layout=first.layout,
        recipients=tuple(Recipient(plan.outcomes, plan.monitor.needs_trials, plan.monitor.opening_order, plan.monitor.counting.events, plan.monitor.counting.open_trials) for plan in plans),
        partitions=partitions,
        lateness=spec.input.lateness,
        tick=first.monitor.tick,
        kind_rank=first.kind_rank,
    )
