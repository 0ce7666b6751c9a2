"""The shield dataflow: source → parse → event-time order → energy shield → shielded decisions and interventions (wiring only)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import bytewax.operators as op
from bytewax.dataflow import Dataflow
from bytewax.inputs import Source
from bytewax.operators import StatefulLogic
from bytewax.outputs import Sink

from fairstream.compiler.plan import Plan
from fairstream.dataflow.flow import parsed_stream
from fairstream.language.models import ShieldSpec
from fairstream.process.lifecycle import stop_requested
from fairstream.process.telemetry import SILENT, Telemetry
from fairstream.records.chain import RecordChain
from fairstream.records.envelope import SHIELDED
from fairstream.records.errors import SpecError
from fairstream.shields.runtime.decisions import ShieldRun
from fairstream.shields.runtime.order import EventOrder, Released
from fairstream.trials.clock import wall_clock


class _ShieldLogic(StatefulLogic):
    """The shield step: orders events, shields decisions, and chains every record it writes but the shielded decisions
    (the decision maker's own records) in one hash chain."""

    def __init__(self, order: EventOrder, run: ShieldRun, chain: RecordChain):
        self.order = order
        self.run = run
        self.chain = chain

    def _decide(self, released: list[Released]) -> list[dict[str, Any]]:
        return self._chained([record for event, arrival in released for record in self.run.receive(event, arrival)])

    def _chained(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Link every record but the shielded decisions, checkpoint seals where they are due."""
        linked = []
        for record in records:
            if record["type"] != SHIELDED:
                checkpoint = self.chain.checkpoint()
                if checkpoint is not None:
                    linked.append(checkpoint)
                self.chain.link(record)
            linked.append(record)
        return linked

    def on_item(self, value) -> tuple[list[dict[str, Any]], bool]:
        partition, events, dead, idle = value
        released, letters = self.order.receive(partition, events, dead, idle)
        return self._chained([letter.to_json() for letter in letters]) + self._decide(released), StatefulLogic.RETAIN

    def notify_at(self) -> datetime | None:
        """When the earliest held decision has waited `shield.answer_within`."""
        due = self.order.next_deadline()
        return None if due is None else datetime.fromtimestamp(due / 1000, tz=UTC)

    def on_notify(self) -> tuple[list[dict[str, Any]], bool]:
        return self._decide(self.order.release_due(wall_clock())), StatefulLogic.RETAIN

    def on_eof(self) -> tuple[list[dict[str, Any]], bool]:
        if stop_requested():  # stopped, not ended: decisions held for ordering wait in the snapshot
            return [], StatefulLogic.RETAIN
        return [*self._decide(self.order.finish()), *self._chained(self.run.closing()), self.chain.seal(final=True)], StatefulLogic.RETAIN

    def snapshot(self) -> tuple[EventOrder, ShieldRun, RecordChain]:
        return copy.deepcopy((self.order, self.run, self.chain))


def answered_kinds(shield: ShieldSpec) -> frozenset[str]:
    """The kinds the shield acts on whenever they arrive: decisions, and the labels equal opportunity counts by."""
    return frozenset(kind for kind in (shield.decisions, shield.labels) if kind is not None)


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

    def shield_logic(resume: tuple[EventOrder, ShieldRun, RecordChain] | None) -> _ShieldLogic:
        if resume is not None:
            return _ShieldLogic(*resume)
        within = None if spec.shield.answer_within is None else round(spec.shield.answer_within * 1000)  # type: ignore[union-attr]
        order = EventOrder(
            partitions, spec.input.lateness, spec.input.max_future, spec.input.max_ahead, plan.letter_record, answered=answered_kinds(spec.shield), answer_within=within  # type: ignore[arg-type]
        )
        return _ShieldLogic(order, ShieldRun(spec.shield, spec.monitor, plan.sha256), RecordChain(f"shield/{spec.monitor}", plan.sha256))  # type: ignore[arg-type]

    flow = Dataflow(f"{spec.monitor.replace('.', '_')}-shield")
    parsed = parsed_stream(flow, plan, source, strings=strings)  # ("p<partition>", PartitionBatch)
    keyed = op.map("key-shield", parsed, lambda item: ("shield", item[1]))
    shielded = op.key_rm("unkey-shield", op.stateful("shield", keyed, shield_logic))  # record dict
    records = op.inspect("observe", shielded, lambda _step, record: telemetry.observe(record))
    if encode is not None:
        records = op.filter_map("encode", records, encode)
    op.output("write", records, sink)
    return flow
