"""Operational metrics of a running job, in Prometheus form: what was read, rejected, kept open and closed, how far
event time has come and how far behind the wall clock it is, the consumer's lag, the alerts written and the verdict
of every part. The dataflow's steps report here (per batch, never per event); `connectors.metrics_server` serves it.
The same reports feed this process's `RunTally`, which the run's summary and exit code come from."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import GaugeMetricFamily

from fairstream.language.metric import tests_ratio
from fairstream.records.envelope import ALERT_TYPES, NOTICES, TRIGGER
from fairstream.records.timefmt import time_parser
from fairstream.verdicts.summary import proxied, rested_on
from fairstream.verdicts.tally import LATE_SHARE, RunTally, late_line
from fairstream.verdicts.tracked import UNSEEN_AFTER, unseen_line

REGISTRY = CollectorRegistry(auto_describe=True)
"""The job's own registry (not the client library's global one), so nothing but these metrics is served."""

EVENTS_READ = Counter("fairstream_events_read", "Records read from the input, per input partition", ["partition"], registry=REGISTRY)
DEAD_LETTERS = Counter("fairstream_dead_letters", "Records rejected to the dead letters, per reason", ["reason"], registry=REGISTRY)
UNWRITTEN = Counter("fairstream_dead_letters_unwritten", "Dead letters counted but not written: past the dead-letter file's size cap", registry=REGISTRY)
OPEN_TRIALS = Gauge("fairstream_open_trials", "Trials open now, per monitor", ["monitor"], registry=REGISTRY)
PARTITION_TIME = Gauge("fairstream_partition_event_time_seconds", "Latest event time (Unix seconds) seen on an input partition", ["partition"], registry=REGISTRY)
LAG = Gauge("fairstream_consumer_lag_messages", "Messages on a Kafka input partition not yet read", ["topic", "partition"], registry=REGISTRY)
NOTIFICATIONS_SENT = Counter("fairstream_notifications_sent", "Posts Alertmanager or a webhook accepted, per target", ["target"], registry=REGISTRY)
NOTIFICATIONS_FAILED = Counter("fairstream_notifications_failed", "Posts that failed after every try, per target", ["target"], registry=REGISTRY)
NOTIFICATIONS_UNDELIVERED = Counter(
    "fairstream_notifications_undelivered", "Alerts an endpoint never accepted, written down as pipeline.undelivered records, per target", ["target"], registry=REGISTRY
)
ALERTS = Counter("fairstream_alerts", "Alert records written, per monitor and type (violation, recovery, shield intervention)", ["monitor", "type"], registry=REGISTRY)
SHIELD_DECISIONS = Counter(
    "fairstream_shield_decisions", "Decisions the shield answered, per monitor and arrival: on_time, late (past the lateness), future or overtaken (behind one the clock answered)", ["monitor", "arrival"], registry=REGISTRY
)
SHIELD_BREAKS = Counter(
    "fairstream_shield_assumption_breaks",
    "Breaks of a shield's synthesis assumptions, per monitor and assumption: overdue labels (label_delay), groups whose raw "
    "rate or share left what the bound assumed (rates, rates_within, share), decisions of undeclared groups (groups)",
    ["monitor", "assumption"],
    registry=REGISTRY,
)
LATE = Gauge("fairstream_late_share", "Share of an input partition's records that came late (beyond input.lateness)", ["partition"], registry=REGISTRY)
STATUSES = ("violated", "certified", "satisfied", "inconclusive")

_open: dict[tuple[str, int], int] = {}
_tally = RunTally()
_tally_lock = threading.Lock()  # the worker threads of one process share the tally
_parse_iso = time_parser("iso")
_late_warned: set[int] = set()
_unseen_warned: set[str] = set()
_proxy_warned: set[str] = set()
_breaks_counted: dict[tuple[str, str], int] = {}
log = logging.getLogger("fairstream.input")


ESTIMATE_GAUGES = {
    "fairstream_closed_trials": ("Trials closed so far, per monitor (as of its latest evaluation)", ["monitor"]),
    "fairstream_evicted_trials": ("Trials not kept because trial.max_open trials were open, per monitor (as of its latest evaluation)", ["monitor"]),
    "fairstream_watermark_seconds": ("Event time (Unix seconds) up to which a monitor has evaluated: its watermark", ["monitor"]),
    "fairstream_watermark_delay_seconds": ("Wall clock minus a monitor's watermark", ["monitor"]),
    "fairstream_verdict": ("Current verdict per monitor and part: 1 violated, 0 not, NaN undefined", ["monitor", "part"]),
    "fairstream_gap": ("The gap (or ratio) a part's verdict tests: of the MAP estimates for point verdicts, of the raw rates for the others", ["monitor", "part"]),
    "fairstream_threshold": ("A part's threshold: ε for a gap, τ for a ratio", ["monitor", "part"]),
    "fairstream_status": ("A part's status, one series per status: 1 for the current one, 0 for the others", ["monitor", "part", "status"]),
    "fairstream_group_estimate": ("A group's published estimate in a part (NaN while its cell is suppressed)", ["monitor", "part", "group"]),
    "fairstream_group_trials": ("A group's trials in a part (NaN while its cell is suppressed)", ["monitor", "part", "group"]),
    "fairstream_window_value": (
        "A window over raw events (spec windows:) at a monitor's latest evaluation; group is empty for a window without by; NaN: a "
        "mean, min or max of no event",
        ["monitor", "window", "group"],
    ),
    "fairstream_trigger_raised": ("A spec trigger: 1 while raised, 0 once cleared (as of the monitor's latest trigger record)", ["monitor", "trigger"]),
    "fairstream_proxy_calibrated": (
        "Groups given as probabilities with a truth field: 1 while the calibration test holds on the self-reported trials, 0 once it "
        "failed, NaN before it is read",
        ["monitor", "part"],
    ),
}
"""The gauges drawn from each monitor's latest estimate."""


def _number(value: float | None) -> float:
    return float("nan") if value is None else float(value)


class _LatestEstimates:
    """Each monitor's latest estimate, turned into its gauges when scraped: an evaluation costs one assignment rather
    than a dozen label lookups (a monitor with a verdict per close evaluates thousands of times a second)."""

    def __init__(self) -> None:
        self.latest: dict[str, dict[str, Any]] = {}
        self.triggers: dict[tuple[str, str], float] = {}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families = {name: GaugeMetricFamily(name, text, labels=labels) for name, (text, labels) in ESTIMATE_GAUGES.items()}
        now = time.time()
        for monitor, record in sorted(self.latest.items()):
            watermark = _parse_iso(record["event_time"]) / 1000
            families["fairstream_closed_trials"].add_metric([monitor], record["trials"]["closed"])
            families["fairstream_evicted_trials"].add_metric([monitor], record["trials"].get("evicted", 0))
            families["fairstream_watermark_seconds"].add_metric([monitor], watermark)
            families["fairstream_watermark_delay_seconds"].add_metric([monitor], now - watermark)
            for part, body in record["parts"].items():
                _part_samples(families, monitor, part, body, record)
            for window, value in record.get("windows", {}).items():
                for group, number in (value.items() if isinstance(value, dict) else [("", value)]):
                    families["fairstream_window_value"].add_metric([monitor, window, group], _number(number))
        for (monitor, trigger), raised in sorted(self.triggers.items()):
            families["fairstream_trigger_raised"].add_metric([monitor, trigger], raised)
        yield from families.values()


def _part_samples(families: dict[str, GaugeMetricFamily], monitor: str, part: str, body: dict[str, Any], record: dict[str, Any]) -> None:
    """The numbers of one part a dashboard graphs: its verdict, the gap (or ratio) the verdict tests and the threshold,
    its status, each group's estimate and trials."""
    families["fairstream_verdict"].add_metric([monitor, part], _number(body.get("violated")))
    families["fairstream_gap"].add_metric([monitor, part], _number(body.get(rested_on(record, tests_ratio(record["metric"])))))
    if body.get("threshold") is not None:
        families["fairstream_threshold"].add_metric([monitor, part], body["threshold"])
    for status in STATUSES:
        families["fairstream_status"].add_metric([monitor, part, status], float(body.get("status") == status))
    if "calibration" in body:
        families["fairstream_proxy_calibrated"].add_metric([monitor, part], _number(body["calibration"]["held"]))
    for group, cell in body.get("groups", {}).items():
        families["fairstream_group_estimate"].add_metric([monitor, part, group], _number(cell.get("estimate")))
        families["fairstream_group_trials"].add_metric([monitor, part, group], _number(cell.get("trials")))


_estimates = _LatestEstimates()
REGISTRY.register(_estimates)


def start_tally() -> RunTally:
    """Begin counting a new run in this process; returns its tally."""
    global _tally
    with _tally_lock:
        _tally = RunTally()
        _late_warned.clear()
        _unseen_warned.clear()
        _proxy_warned.clear()
        _breaks_counted.clear()
    return _tally


def tally() -> RunTally:
    """The tally of the run this process is doing (or did last)."""
    return _tally


def read(partition: int, records: int, latest_time_ms: int | None) -> None:
    EVENTS_READ.labels(str(partition)).inc(records)
    with _tally_lock:
        _tally.read += records
        _tally.read_by_partition[partition] = _tally.read_by_partition.get(partition, 0) + records
    if latest_time_ms is not None:
        PARTITION_TIME.labels(str(partition)).set(latest_time_ms / 1000)


def open_trials(monitor: str, holder: int, count: int) -> None:
    """The open trials of one input partition (or trial bucket); the gauge shows the sum over those of this process."""
    _open[(monitor, holder)] = count
    OPEN_TRIALS.labels(monitor).set(sum(value for (name, _), value in _open.items() if name == monitor))


def dead_letter_unwritten() -> None:
    UNWRITTEN.inc()
    with _tally_lock:
        _tally.unwritten += 1


def notifying(place: str) -> None:
    """The run posts alerts: its summary counts the posts, and names `place`, where undelivered alerts are written."""
    with _tally_lock:
        _tally.notifications = {"sent": 0, "failed": 0, "undelivered": 0}
        _tally.undelivered_to = place


def _notification(kind: str, target: str, counter: Counter, count: int = 1) -> None:
    counter.labels(target).inc(count)
    with _tally_lock:
        if _tally.notifications is not None:
            _tally.notifications[kind] += count


def notification_sent(target: str) -> None:
    _notification("sent", target, NOTIFICATIONS_SENT)


def notification_failed(target: str) -> None:
    _notification("failed", target, NOTIFICATIONS_FAILED)


def notification_undelivered(target: str, count: int) -> None:
    _notification("undelivered", target, NOTIFICATIONS_UNDELIVERED, count)


def lag(partition: int, messages: int, topic: str) -> None:
    LAG.labels(topic, str(partition)).set(messages)


def observe(record: dict[str, Any]) -> None:
    """Count an output record: dead letters by reason, alerts by type, and an estimate's closed trials, watermark and verdicts."""
    with _tally_lock:
        _tally.observe(record)
    kind = record.get("type")
    if kind == "pipeline.dead_letter":
        DEAD_LETTERS.labels(record["reason"]).inc()
        if record["reason"] == "late":
            _late(record["partition"])
    elif kind == "fairness.estimate":
        _estimates.latest[record["monitor"]] = record
        if record.get("unseen_groups"):
            _unseen(record)
        if record["monitor"] not in _proxy_warned and proxied(record):
            _proxy(record)
    elif kind in (*ALERT_TYPES, *NOTICES, "shield.intervention"):
        ALERTS.labels(record.get("monitor", ""), kind).inc()
        if kind == TRIGGER:
            _estimates.triggers[(record["monitor"], record["trigger"])] = 1.0 if record["state"] == "raised" else 0.0
    elif kind == "shield.status" and record.get("assumptions"):
        _shield_breaks(record)
    elif kind == "shield.decision":
        SHIELD_DECISIONS.labels(record["monitor"], next((arrival for arrival in ("late", "future", "overtaken") if record.get(arrival)), "on_time")).inc()


def _proxy(record: dict[str, Any]) -> None:
    """Say once per monitor that its proxy's probabilities failed their calibration test, or gave a rate outside [0, 1]."""
    from fairstream.verdicts.proxy import proxy_lines  # groups as probabilities alone need numpy

    lines = proxy_lines(record)
    if lines:
        _proxy_warned.add(record["monitor"])
        for line in lines:
            log.warning(line)


def _late(partition: int) -> None:
    """Update a partition's late share; the first time it passes `LATE_SHARE` (with ten late records at least), say so once."""
    late, read = _tally.late_by_partition.get(partition, 0), max(_tally.read_by_partition.get(partition, 0), 1)
    LATE.labels(str(partition)).set(late / read)
    if partition not in _late_warned and late >= 10 and late > LATE_SHARE * read:
        _late_warned.add(partition)
        log.warning(late_line(partition, late, read))


def _unseen(record: dict[str, Any]) -> None:
    """Say once per monitor that a listed group has no trial while trials of other values keep coming."""
    unlisted = record.get("unlisted_groups", {})
    if record["monitor"] not in _unseen_warned and sum(unlisted.values()) >= UNSEEN_AFTER:
        _unseen_warned.add(record["monitor"])
        log.warning(unseen_line(record["monitor"], record["unseen_groups"], unlisted))


def _shield_breaks(record: dict[str, Any]) -> None:
    """Add the breaks a status record reports since the last one to the counter."""
    for assumption, report in record["assumptions"].items():
        key = (record["monitor"], assumption)
        count = report.get("breaks", 0)
        if count > _breaks_counted.get(key, 0):
            SHIELD_BREAKS.labels(*key).inc(count - _breaks_counted.get(key, 0))
            _breaks_counted[key] = count
