"""Monitoring from Python, for services without Kafka: load specs, feed events, read alerts and verdicts.

    >>> from fairstream import FairnessMonitor
    >>> monitor = FairnessMonitor.load("hiring_demographic_parity")
    >>> records = monitor.feed([
    ...     {"event": "DECISION", "id": "a1", "time": "2024-03-01T09:00:00Z", "gender": "female", "hired": True},
    ...     {"event": "DECISION", "id": "a2", "time": "2024-03-01T09:05:00Z", "gender": "male", "hired": False},
    ...     {"event": "DECISION", "id": "a3", "time": "2024-03-01T09:10:00Z"},
    ... ])
    >>> records += monitor.close()                # the end of the input: every open trial closes
    >>> [record["type"] for record in records]   # the seals close the records' hash chains (see `fairstream verify`)
    ['pipeline.dead_letter', 'fairness.estimate', 'fairness.estimate', 'pipeline.seal', 'pipeline.seal']
    >>> records[0]["reason"], records[0]["detail"]
    ('missing_field', "DECISION events need field 'gender'")
    >>> monitor.verdicts()                        # per (monitor, part): True violated, False not, None undefined
    {('hiring-demographic-parity', 'selection_rate'): False}

The steps are those of `fairstream run` (parse, clock, trials, merge), driven in the calling thread, so the
same events give the same records as the command; nothing is written anywhere but the returned lists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fairstream.compiler.load import load_plans
from fairstream.compiler.plan import Plan
from fairstream.dataflow.flow import MergeStep, new_partition_trials
from fairstream.monitor import Monitor
from fairstream.records.envelope import ALERT_TYPES, ESTIMATE
from fairstream.records.events import DeadLetter, RawRecord, Sealed
from fairstream.trials.partition import Output


class FairnessMonitor:
    """One or several monitors over one stream of events, fed in order from Python."""

    def __init__(self, plans: list[Plan], *, hold_start: bool = False):
        """`hold_start`: hold the first 100 events and judge them as a file run does (`input.max_gap`), for a caller
        that feeds them all at once; by default each record fed is answered at once."""
        self.time_field = plans[0].spec.input.time
        """The field that holds each event's time, and its format (`input.time_format`), shared by every monitor."""
        self.time_format = plans[0].spec.input.time_format
        self.numbered = plans[0].spec.input.numbered
        """A plain table's spec (no input section): each row fed is numbered, its number its trial's key and time."""
        self.input = plans[0].spec.input
        """The input section every monitor reads events by."""
        self.plans = plans
        """One plan per monitor: its spec and settings."""
        self._partition = new_partition_trials(plans, 0, 1, strings=False)
        if not hold_start:
            self._partition.clock.begin_at_once()
        self._merges = [MergeStep(Monitor(dataclasses.replace(plan.monitor, reporters=1))) for plan in plans]
        self._offset = 0
        self._latest: dict[str, dict[str, Any]] = {}
        self.alerts: list[dict[str, Any]] = []
        """Every alert so far (violations, recoveries, certifications), in the order they were raised."""

    @classmethod
    def load(cls, *specs: str | Path | Mapping[str, Any], hold_start: bool = False) -> FairnessMonitor:
        """Monitors for spec files, bundled specs' names, folders of specs or specs given as dicts (whose input
        sections must agree); `hold_start` as for the constructor."""
        return cls(load_plans([spec if isinstance(spec, Mapping) else str(spec) for spec in specs]), hold_start=hold_start)

    def feed(self, records: Iterable[dict[str, Any] | bytes | str]) -> list[dict[str, Any]]:
        """Take records in order (dicts, or JSON text); return the estimates, alerts and dead letters now final (and
        the seals of their chains)."""
        batch = []
        for record in records:
            batch.append(RawRecord(0, self._offset, record))
            self._offset += 1
        return self._seen(self._outputs(self._partition.receive(batch)))

    def close(self) -> list[dict[str, Any]]:
        """End the input: open trials close at their close time and every evaluation still due is made."""
        return self._seen(self._outputs(self._partition.finish()))

    def _outputs(self, items: list[Output]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for item in items:
            if type(item) is DeadLetter or type(item) is Sealed:
                out.append(item.to_json())
            else:
                index, report = item
                out.extend(self._merges[index].on_item(report)[0])
        return out

    def verdicts(self) -> dict[tuple[str, str], bool | None]:
        """The latest evaluation's verdict per (monitor, part)."""
        return {(monitor, part): body["violated"] for monitor, record in self._latest.items() for part, body in record["parts"].items()}

    def _seen(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for record in records:
            if record["type"] == ESTIMATE:
                self._latest[record["monitor"]] = record
            elif record["type"] in ALERT_TYPES:
                self.alerts.append(record)
        return records
