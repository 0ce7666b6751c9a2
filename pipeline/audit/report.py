"""A run's bias audit, assembled from its records (pure): per monitor the audit tables of its last estimate, the
timeline of its verdicts with the event time and the wall-clock time of each, the spec it ran under (text and sha256),
the period the data covers and the trials of unknown category; for the run, dead letters by reason and the state of
the records' hash chains."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from fairstream.audit.tables import MIN_SHARE, AuditTable, part_tables
from fairstream.audit.verify import ChainCheck, Located, verify_chains
from fairstream.compiler.plan import Plan
from fairstream.language.metric import tests_ratio
from fairstream.records.envelope import ALERT_TYPES
from fairstream.verdicts.summary import rested_on

RATE_NAMES = {
    "selection_rate": "selection rate",
    "scoring_rate": "scoring rate",
    "true_positive_rate": "true positive rate",
    "false_positive_rate": "false positive rate",
}


@dataclass
class MonitorAudit:
    """What the report shows of one monitor."""

    monitor: str
    metric: str
    verdict: str
    spec_sha256: str | None
    produced_by: list[str]
    """The fairstream versions that wrote the monitor's records, in the order they first did (a run resumed after an
    upgrade has two); empty for records from before versions were recorded."""
    plan: Plan | None
    """The spec whose sha256 the records name, where it was found (given with --spec, or bundled)."""
    first_event: str
    """The first decision (the first event of a kind that opens trials); from older records, the first evaluation."""
    last_event: str
    """The evaluation by which the last trial counted had closed; from older records, the last evaluation."""
    closed: int
    unknown: int
    """Trials without a category: closed trials missing a value the metric needs (the group, or the outcome)."""
    tables: list[AuditTable]
    timeline: list[dict[str, Any]]
    """The monitor's verdict records in the order written: type, part, pair, event time and wall-clock time."""
    estimates: list[dict[str, Any]] = field(repr=False, default_factory=list)
    alerts: list[dict[str, Any]] = field(repr=False, default_factory=list)

    def first_violations(self) -> dict[str, dict[str, Any]]:
        """Per part (and group, for a constraint), the first record that found it in violation."""
        first: dict[str, dict[str, Any]] = {}
        for record in self.timeline:
            if record["type"] == "fairness.violation":
                first.setdefault(record["part"] + (f" / {record['group']}" if record.get("group") else ""), record)
        return first


@dataclass
class RunAudit:
    monitors: list[MonitorAudit]
    dead_letters: Counter
    chains: ChainCheck


SpecOf = Callable[[str, str], Plan | None]
"""The spec a monitor ran under, from the sha256 its records name and the monitor's name; None when it is not known."""


def audit_run(located: Iterable[Located], spec_of: SpecOf, *, min_share: float = MIN_SHARE) -> RunAudit:
    """The audit of a run's records (every record, as read, so that the hash chains are checked on the way)."""
    found = list(located)
    records = [item.record for item in found]
    by_monitor: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for record in records:
        if record.get("type") == "fairness.estimate" or record.get("type") in ALERT_TYPES:
            family = "estimates" if record["type"] == "fairness.estimate" else "alerts"
            by_monitor.setdefault(record["monitor"], {"estimates": [], "alerts": []})[family].append(record)
    letters = Counter(record.get("reason", "?") for record in _distinct(r for r in records if r.get("type") == "pipeline.dead_letter"))
    audits = [
        _monitor_audit(name, _distinct(kinds["estimates"]), _distinct(kinds["alerts"]), spec_of, min_share)
        for name, kinds in by_monitor.items()
        if kinds["estimates"]
    ]
    return RunAudit(audits, letters, verify_chains(found, open_chains=True))  # a running job's chains are open: said so, not broken


def _distinct(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record once (a resumed run or at-least-once delivery repeats some), in the order first written."""
    seen: dict[str, dict[str, Any]] = {}
    for record in records:
        seen.setdefault(record.get("alert_id", str(id(record))), record)
    return sorted(seen.values(), key=lambda record: (record.get("chain") or {}).get("seq", 0))


def _monitor_audit(name: str, estimates: list[dict[str, Any]], alerts: list[dict[str, Any]], spec_of: SpecOf, min_share: float) -> MonitorAudit:
    last = estimates[-1]
    spec_sha = (last.get("chain") or {}).get("spec")
    plan = spec_of(spec_sha, name) if spec_sha else None
    attributes = _attributes(plan)
    measure = rested_on(last, tests_ratio(last["metric"]))
    tables = [
        table
        for part, body in last["parts"].items()
        if "groups" in body and "constraint" not in body
        for table in part_tables(
            name, part, body, attributes, min_share=min_share, rate_name=RATE_NAMES.get(part), marginals=last.get("marginals"), measure=measure
        )
    ]
    times = [record["event_time"] for record in estimates]
    decisions = last.get("decisions")
    closed = last["trials"]["closed"]
    counted_by = next((record["event_time"] for record in estimates if record["trials"]["closed"] == closed), max(times))
    return MonitorAudit(
        monitor=name,
        metric=last["metric"],
        verdict=last.get("verdict", "point"),
        spec_sha256=spec_sha,
        produced_by=list(dict.fromkeys(version for record in [*estimates, *alerts] if (version := (record.get("chain") or {}).get("version")))),
        plan=plan,
        first_event=decisions["first"] if decisions else min(times),
        last_event=counted_by if decisions else max(times),
        closed=last["trials"]["closed"],
        unknown=last["trials"].get("incomplete", 0),
        tables=tables,
        timeline=[_verdict(record, measure) for record in alerts],
        estimates=estimates,
        alerts=alerts,
    )


def _attributes(plan: Plan | None) -> list[str]:
    if plan is None:
        return []
    group = plan.spec.metric.group
    return [group] if isinstance(group, str) else list(group)


def _verdict(record: dict[str, Any], measure: str) -> dict[str, Any]:
    """A verdict record as the timeline lists it, with the ratio or gap the verdict rests on (`measure`)."""
    return {
        "type": record["type"],
        "part": record.get("part", ""),
        "group": record.get("group"),
        "pair": record.get("pair"),
        "measure": measure,
        "value": record.get(measure),
        "status": record.get("status"),
        "event_time": record["event_time"],
        "emitted_at": record.get("emitted_at"),
    }
