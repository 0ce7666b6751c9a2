"""What the dashboard shows, gathered from a job's output records: per monitor its parts over event time, its alerts
and its shield's course, and the dead letters by reason; a snapshot thins long series for the page (pure)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fairstream.language.metric import tests_ratio
from fairstream.monitoring.event_windows import window_series
from fairstream.monitoring.triggers import raised_spans
from fairstream.records.envelope import (
    ALERT_TYPES,
    CHANGED,
    DEAD_LETTER,
    ESTIMATE,
    INTERVENTION,
    JOB_MERGED,
    MERGED,
    NOTICES,
    STATUS,
    TRIGGER,
)


@dataclass
class MonitorHistory:
    """One monitor's records as they arrived: its estimates (kept whole; thinned only in snapshots), alerts and shield
    statuses."""

    name: str
    estimates: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    interventions: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class DashboardState:
    """Every monitor's history, the dead letters by reason, and whatever keeps the source from being read."""

    monitors: dict[str, MonitorHistory] = field(default_factory=dict)
    dead_letters: Counter[str] = field(default_factory=Counter)
    alerts_by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    """Ids of the records taken: a record read twice (sinks are at least once, a source may re-read) counts once."""
    error: str | None = None
    version: int = 0
    """Grows with every change, so the server pushes a snapshot only when there is something new."""

    def add(self, records: list[dict[str, Any]]) -> None:
        """Take records of any type, in the order they were written; a record whose id was taken before is skipped."""
        for record in records:
            record_id = record.get("alert_id")
            if record_id is not None:
                if record_id in self.seen:
                    continue
                self.seen.add(record_id)
            kind = record.get("type")
            if kind == DEAD_LETTER:
                self.dead_letters[str(record.get("reason"))] += 1
                continue
            name = record.get("monitor")
            if not isinstance(name, str):
                continue
            history = self.monitors.get(name)
            if history is None:
                history = self.monitors[name] = MonitorHistory(name)
            if kind == ESTIMATE:
                history.estimates.append(record)
            elif kind in (*ALERT_TYPES, *NOTICES, INTERVENTION):
                self.alerts_by_id[str(record_id)] = record
                (history.interventions if kind == INTERVENTION else history.alerts).append(record)
            elif kind == STATUS:
                history.statuses.append(record)
        if records:
            self.version += 1

    def set_error(self, error: str | None) -> None:
        if error != self.error:
            self.error = error
            self.version += 1

    def snapshot(self, max_points: int) -> dict[str, Any]:
        """The page's data: per monitor its parts with at most `max_points` evaluations each (violated periods from all
        of them), its alerts, its shield's course; and the dead letters."""
        return {
            "version": self.version,
            "error": self.error,
            "monitors": [monitor_view(history, max_points) for _, history in sorted(self.monitors.items())],
            "dead_letters": dict(self.dead_letters.most_common()),
        }


def thin(count: int, max_points: int) -> list[int]:
    """Indices of at most `max_points` of `count` evaluations, evenly spread, the first and the last always among them.

    >>> thin(10, 4)
    [0, 3, 6, 9]
    >>> thin(3, 10)
    [0, 1, 2]
    """
    if count <= max_points:
        return list(range(count))
    step = (count - 1) / (max_points - 1)
    return sorted({round(index * step) for index in range(max_points)})


def monitor_view(history: MonitorHistory, max_points: int) -> dict[str, Any]:
    estimates = history.estimates
    latest = estimates[-1] if estimates else None
    return {
        "name": history.name,
        "metric": latest["metric"] if latest else None,
        "verdict": latest["verdict"] if latest else None,
        "event_time": latest["event_time"] if latest else None,
        "trials": latest["trials"] if latest else None,
        "evaluations": len(estimates),
        "parts": part_views(estimates, max_points),
        "alerts": [alert_row(alert) for alert in history.alerts],
        "shield": shield_view(history, max_points),
        "windows": window_views(history, max_points),
    }


def window_views(history: MonitorHistory, max_points: int) -> list[dict[str, Any]]:
    """Each window over raw events (thinned like the parts), its groups' values, and the stretches each trigger stood
    raised; none where the spec has no windows."""
    estimates = history.estimates
    kept = [estimates[index] for index in thin(len(estimates), max_points)]
    series = window_series(kept, lambda record: record["event_time"])
    spans = raised_spans(history.alerts, lambda record: record["event_time"], estimates[-1]["event_time"]) if series else []
    return [
        {"name": name, "groups": {group: {"times": times, "values": values} for group, (times, values) in groups.items()}, "raised": [list(span) for span in spans]}
        for name, groups in sorted(series.items())
    ]


def part_views(estimates: list[dict[str, Any]], max_points: int) -> list[dict[str, Any]]:
    """Each part of the metric over event time, in order of first appearance; delayed-impact constraints, which have
    no gap, are left to the alerts list."""
    names = list(dict.fromkeys(part for record in estimates for part, body in record["parts"].items() if "constraint" not in body))
    kept = [estimates[index] for index in thin(len(estimates), max_points)]
    return [_part_view(name, estimates, kept) for name in names]


def _part_view(name: str, every: list[dict[str, Any]], kept: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [(record["event_time"], record["parts"].get(name)) for record in kept]
    groups = sorted({group for _, body in rows if body for group in body["groups"]})
    latest = next(body for body in (record["parts"].get(name) for record in reversed(every)) if body)
    ratio = tests_ratio(every[-1]["metric"])
    measure = latest.get("interval_of") or ("ratio" if ratio else "gap")  # the gap an interval is for: the raw one of confident verdicts
    point = next((cell.get("interval_of") for cell in latest["groups"].values() if cell.get("interval_of")), "estimate")

    def cell(body: dict[str, Any] | None, group: str, key: str) -> Any:
        value = ((body or {}).get("groups", {}).get(group) or {}).get(key)
        return None if isinstance(value, float) and math.isnan(value) else value

    def interval(body: dict[str, Any] | None, group: str, side: int) -> float | None:
        bounds = cell(body, group, "interval")
        return bounds[side] if bounds else None

    hysteresis = latest.get("hysteresis", 0.0)
    threshold = latest.get("threshold")
    return {
        "name": name,
        "times": [time for time, _ in rows],
        "groups": {
            group: {
                "estimate": [cell(body, group, point) for _, body in rows],
                "low": [interval(body, group, 0) for _, body in rows],
                "high": [interval(body, group, 1) for _, body in rows],
                "trials": [cell(body, group, "trials") for _, body in rows],
            }
            for group in groups
        },
        "measure": measure,
        "point": point,
        "values": [(body or {}).get(measure) for _, body in rows],
        "value_low": [((body or {}).get("interval") or [None, None])[0] if measure.endswith("gap") else None for _, body in rows],
        "value_high": [((body or {}).get("interval") or [None, None])[1] if measure.endswith("gap") else None for _, body in rows],
        "threshold": threshold,
        "clear_line": None if not hysteresis or threshold is None else threshold + hysteresis if ratio else threshold - hysteresis,
        "violated_periods": violated_periods([(record["event_time"], (record["parts"].get(name) or {}).get("violated")) for record in every]),
        "certified_periods": violated_periods([(record["event_time"], (record["parts"].get(name) or {}).get("status") == "certified") for record in every]),
        "status": latest.get("status"),
        "time_to_verdict": latest.get("time_to_verdict"),
        "latest_groups": {group: cell(latest, group, "trials") for group in sorted(latest["groups"])},
    }


def violated_periods(verdicts: list[tuple[str, bool | None]]) -> list[list[str]]:
    """[start, end] of each run of evaluations that were violated (or certified): from the first such one to the next
    one that is not (or the last evaluation), exact whatever the thinning.

    >>> violated_periods([("d1", False), ("d2", True), ("d3", True), ("d4", False), ("d5", True)])
    [['d2', 'd4'], ['d5', 'd5']]
    """
    periods: list[list[str]] = []
    start = None
    for time, violated in verdicts:
        if violated and start is None:
            start = time
        elif not violated and start is not None:
            periods.append([start, time])
            start = None
    if start is not None:
        periods.append([start, verdicts[-1][0]])
    return periods


def merged_pair(alert: dict[str, Any]) -> tuple[str | None, list[str] | None]:
    """The part and pair a `fairness.violated_somewhere` record leans on most: the pooled test's first pair where it
    carries most of the evidence, else the first carrier."""
    pooled = max(alert.get("pooled") or [], key=lambda entry: entry["share_of_evidence"], default=None)
    if pooled is not None and pooled["share_of_evidence"] >= 0.5 and pooled["leaning_on"]:
        return pooled["part"], pooled["leaning_on"][0]["pair"]
    carriers = alert.get("carriers") or []
    return (carriers[0]["part"], carriers[0]["pair"]) if carriers else (None, None)


def alert_row(alert: dict[str, Any]) -> dict[str, Any]:
    """What the alerts list shows of an alert: when, which part and pair (or group), the gap or ratio, the verdict mode
    (a change: at its change point, the size of the gap after it)."""
    if alert.get("type") == CHANGED:
        after = abs(alert["gap_after"])
        return {
            "alert_id": alert.get("alert_id"), "type": CHANGED, "event_time": alert.get("changed_at"), "part": alert.get("part"),
            "pair": alert.get("pair"), "gap": after, "ratio": None, "raw_gap": after, "raw_ratio": None, "verdict": "change", "value": alert["gap_after"],
        }  # fmt: skip
    if alert.get("type") == JOB_MERGED:
        return {
            "alert_id": alert.get("alert_id"), "type": JOB_MERGED, "event_time": alert.get("event_time"), "part": None, "pair": None,
            "gap": None, "ratio": None, "raw_gap": None, "raw_ratio": None, "verdict": "job", "value": alert.get("log_evidence"),
        }  # fmt: skip
    if alert.get("type") == TRIGGER:
        return {
            "alert_id": alert.get("alert_id"), "type": TRIGGER, "event_time": alert.get("event_time"), "part": f"trigger {alert.get('trigger')}",
            "pair": [alert.get("state")], "gap": None, "ratio": None, "raw_gap": None, "raw_ratio": None, "verdict": "trigger", "value": None,
        }  # fmt: skip
    if alert.get("type") == MERGED:
        named = merged_pair(alert)
        return {
            "alert_id": alert.get("alert_id"), "type": MERGED, "event_time": alert.get("event_time"), "part": named[0], "pair": named[1],
            "gap": None, "ratio": None, "raw_gap": None, "raw_ratio": None, "verdict": "merged", "value": alert.get("log_evidence"),
        }  # fmt: skip
    verdict = _verdict_of(alert)
    return {
        "alert_id": alert.get("alert_id"),
        "type": alert.get("type"),
        "event_time": alert.get("event_time"),
        "part": alert.get("part"),
        "pair": alert.get("pair") or ([alert["group"]] if alert.get("group") else []),
        "gap": alert.get("gap"),
        "ratio": alert.get("ratio"),
        "raw_gap": alert.get("raw_gap"),
        "raw_ratio": alert.get("raw_ratio"),
        "verdict": verdict,
        "value": _rested_on(alert, verdict),
    }


def _rested_on(alert: dict[str, Any], verdict: str) -> float | None:
    """The gap (or ratio) the alert's verdict rests on: the MAP one for point verdicts, the raw one for the tests (the
    moment estimates' where groups are given as probabilities)."""
    names = ("gap", "ratio") if verdict == "point" or alert.get("groups_from") == "probabilities" else ("raw_gap", "raw_ratio")
    return next((alert[name] for name in names if alert.get(name) is not None), None)


def _verdict_of(alert: dict[str, Any]) -> str:
    if "constraint" in alert:
        return "constraint"
    if "log_wealth" in alert:
        return "anytime"
    if "interval" in alert:
        return "confident"
    return "point"


def shield_view(history: MonitorHistory, max_points: int) -> dict[str, Any] | None:
    """A shield's fairness value over event time against its targets, and its flips; None for monitors without one."""
    statuses = history.statuses
    if not statuses and not history.interventions:
        return None
    kept = [statuses[index] for index in thin(len(statuses), max_points)]
    latest = statuses[-1] if statuses else {}
    flips = history.interventions[-max_points:]
    return {
        "times": [status["event_time"] for status in kept],
        "fairness": [status["fairness"] for status in kept],
        "running": latest.get("running"),
        "limit": latest.get("limit"),
        "flips": {
            "times": [flip["event_time"] for flip in flips],
            "count": [flip["interventions"] for flip in flips],
            "ids": [flip["alert_id"] for flip in flips],
        },
        "total_interventions": history.interventions[-1]["interventions"] if history.interventions else 0,
    }
