"""Monitoring from Python, for services without Kafka: load specs, feed events, read alerts and verdicts.

    >>> from fairstream import FairnessMonitor
    >>> monitor = FairnessMonitor.load("hiring_demographic_parity")
    >>> records = monitor.feed([
    ...     {"event": "DECISION", "id": "a1", "time": "2024-03-01T09:00:00Z", "gender": "female", "hired": True},
    ...     {"event": "DECISION", "id": "a2", "time": "2024-03-01T09:05:00Z", "gender": "male", "hired": False},
    ...     {"event": "DECISION", "id": "a3", "time": "2024-03-01T09:10:00Z"},
    ... ])
    >>> records += monitor.close()                # the end of the input: every open trial closes
    >>> [record["type"] for record in records]
    ['pipeline.dead_letter', 'fairness.estimate', 'fairness.estimate']
    >>> records[0]["reason"], records[0]["detail"]
    ('missing_field', "DECISION events need field 'gender'")
    >>> monitor.verdicts()                        # per (monitor, part): True violated, False not, None undefined
    {('hiring-demographic-parity', 'selection_rate'): False}

The steps are those of `fairstream run` (parse, clock, trial buckets, merge), driven in the calling thread, so the
same events give the same records as the command; nothing is written anywhere but the returned lists.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fairstream.events import RawRecord
from fairstream.flow import BucketStep, ClockStep, MergeStep, ParseBatch, new_bucket, new_clock
from fairstream.monitor import Monitor
from fairstream.spec.load import load_plans
from fairstream.spec.plan import Plan
from fairstream.verdicts.alerts import ESTIMATE, RECOVERED, VIOLATION


class FairnessMonitor:
    """One or several monitors over one stream of events, fed in order from Python."""

    def __init__(self, plans: list[Plan]):
        first = plans[0]
        self._parse = ParseBatch(first.parser())
        self._clock = ClockStep(new_clock(first), first.spec.buckets)
        self._monitors = [
            ({index: BucketStep(new_bucket(plan, partitions=1), plan.spec.monitor) for index in range(first.spec.buckets)}, MergeStep(Monitor(plan.monitor)))
            for plan in plans
        ]
        self._offset = 0
        self._latest: dict[str, dict[str, Any]] = {}
        self.alerts: list[dict[str, Any]] = []
        """Every violation and recovery so far, in the order they were raised."""

    @classmethod
    def load(cls, *specs: str | Path) -> FairnessMonitor:
        """Monitors for spec files, bundled specs' names or folders of specs (whose input sections must agree)."""
        return cls(load_plans([str(spec) for spec in specs]))

    def feed(self, records: Iterable[dict[str, Any] | bytes | str]) -> list[dict[str, Any]]:
        """Take records in order (dicts, or JSON text); return the estimates, alerts and dead letters now final."""
        batch = []
        for record in records:
            batch.append(RawRecord(0, self._offset, record))
            self._offset += 1
        out: list[dict[str, Any]] = []
        for _key, partition_batch in self._parse(batch):
            routed, _ = self._clock.on_item(partition_batch)
            for item in routed:
                if item[0] == "dead":
                    out.append(item[1].to_json())
                    continue
                _, _, (index, *_rest) = item
                for buckets, merge in self._monitors:
                    reports, _ = buckets[index].on_item(item[2])
                    for report in reports:
                        out.extend(merge.on_item(report)[0])
        return self._seen(out)

    def close(self) -> list[dict[str, Any]]:
        """End the input: open trials close at their close time and every evaluation still due is made."""
        out: list[dict[str, Any]] = []
        for buckets, merge in self._monitors:
            for bucket in buckets.values():
                for report in bucket.on_eof()[0]:
                    out.extend(merge.on_item(report)[0])
        return self._seen(out)

    def verdicts(self) -> dict[tuple[str, str], bool | None]:
        """The latest evaluation's verdict per (monitor, part)."""
        return {(monitor, part): body["violated"] for monitor, record in self._latest.items() for part, body in record["parts"].items()}

    def _seen(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for record in records:
            if record["type"] == ESTIMATE:
                self._latest[record["monitor"]] = record
            elif record["type"] in (VIOLATION, RECOVERED):
                self.alerts.append(record)
        return records
