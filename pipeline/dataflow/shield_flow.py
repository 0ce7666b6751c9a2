"""The shield dataflow: source → parse → event-time order → energy shield → shielded decisions and interventions (wiring only)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fairstream.compiler.plan import Plan
from fairstream.dataflow.flow import parsed_stream
from fairstream.engine.api import Dataflow, Sink, Source, StatefulLogic, op
from fairstream.process.lifecycle import stop_requested
from fairstream.process.telemetry import SILENT, Telemetry
from fairstream.records.errors import SpecError
from fairstream.shields.runtime.configured import configure
from fairstream.shields.runtime.step import ShieldStep
from fairstream.trials.clock import wall_clock


class _ShieldLogic(StatefulLogic):
    """The shield step (`ShieldStep`) in the dataflow: a batch at a time, and by the wall clock when a decision is due."""

    def __init__(self, step: ShieldStep):
        self.step = step

    def on_item(self, value) -> tuple[list[dict[str, Any]], bool]:
        return self.step.take(*value), StatefulLogic.RETAIN

    def notify_at(self) -> datetime | None:
        """When the earliest held decision has waited `shield.answer_within`."""
        due = self.step.next_deadline()
        return None if due is None else datetime.fromtimestamp(due / 1000, tz=UTC)

    def on_notify(self) -> tuple[list[dict[str, Any]], bool]:
        return self.step.due(wall_clock()), StatefulLogic.RETAIN

    def on_eof(self) -> tuple[list[dict[str, Any]], bool]:
        if stop_requested():  # stopped, not ended: decisions held for ordering wait in the snapshot
            return [], StatefulLogic.RETAIN
        return self.step.finish(), StatefulLogic.RETAIN

    def snapshot(self) -> ShieldStep:
        return copy.deepcopy(self.step)


def build_shield_flow(
    plan: Plan,
    source: Source,
    sink: Sink,
    *,
    partitions: int = 1,
    strings: bool = False,
    encode: Callable[[dict[str, Any]], Any] | None = None,
    telemetry: Telemetry = SILENT,
) -> Dataflow:
    """Decisions through the spec's shield: shielded decision records, intervention records and dead letters to the
    sink, each told to `telemetry`."""
    spec = plan.spec
    if spec.shield is None:
        raise SpecError(spec.monitor, [("shield", "the spec has no shield section")])
    configure(spec.shield)  # synthesized now, while the job starts, not when its first decision waits for an answer

    def shield_logic(resume: ShieldStep | None) -> _ShieldLogic:
        if resume is not None:
            return _ShieldLogic(resume)
        within = None if spec.shield.answer_within is None else round(spec.shield.answer_within * 1000)  # type: ignore[union-attr]
        return _ShieldLogic(ShieldStep.start(spec, plan.sha256, plan.letter_record, partitions=partitions, answer_within=within))

    flow = Dataflow(f"{spec.monitor.replace('.', '_')}-shield")
    parsed = parsed_stream(flow, plan, source, strings=strings)  # ("p<partition>", PartitionBatch)
    keyed = op.map("key-shield", parsed, lambda item: ("shield", item[1]))
    shielded = op.key_rm("unkey-shield", op.stateful("shield", keyed, shield_logic))  # record dict
    records = op.inspect("observe", shielded, lambda _step, record: telemetry.observe(record))
    if encode is not None:
        records = op.filter_map("encode", records, encode)
    op.output("write", records, sink)
    return flow
