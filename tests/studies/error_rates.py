"""Streams and counts generated here, with numpy alone, for the error-rate simulations: the monitor only reads them.

Each function returns what a run of the monitor sees; the rates, group sizes and delays are the simulation's own, so a
false alarm is a violation the generating process does not have.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from fairstream.monitor import Monitor
from fairstream.trials.bucket import FINISHED, Report
from fairstream.trials.outcomes import TickDelta

DAY_MS = 86_400_000
START = datetime(2026, 1, 1, tzinfo=UTC)


def mc_error(rate: float, runs: int) -> float:
    """The Monte Carlo standard error of a rate estimated from `runs` independent runs."""
    return math.sqrt(max(rate * (1 - rate), 1e-12) / runs)


def group_sizes(total: int, ratio: tuple[int, int]) -> tuple[int, int]:
    first = round(total * ratio[0] / sum(ratio))
    return first, total - first


def counts_delta(part_counts: dict[str, dict[str, tuple[int, int]]]) -> TickDelta:
    """One tick's closed trials as counts: per part, per group, (hits, trials)."""
    delta = TickDelta()
    for part, groups in part_counts.items():
        for group, (hits, trials) in groups.items():
            delta.counts[(part, group)] = [hits, trials]
    delta.closed = max(sum(trials for _, trials in groups.values()) for groups in part_counts.values())
    return delta


def one_look(monitor: Monitor, part_counts: dict[str, dict[str, tuple[int, int]]]) -> dict[str, Any]:
    """The monitor's one evaluation (a fixed time) of the given counts: its estimate record."""
    records = monitor.receive(Report(0, FINISHED, {DAY_MS: counts_delta(part_counts)}))
    return next(record for record in records if record["type"] == "fairness.estimate")


def delayed_decisions(n: int, rates: tuple[float, float], seed: int, *, negative_delay_a: float, share_a: float = 0.5) -> list[dict[str, Any]]:
    """Applications one minute apart, each decided an hour later, except group A's rejections, decided
    `negative_delay_a` hours later: the order labels arrive in depends on the outcome. Records sorted by time."""
    rng = np.random.default_rng(seed)
    in_a = rng.random(n) < share_a
    approved = rng.random(n) < np.where(in_a, rates[0], rates[1])
    records = []
    for index in range(n):
        opened = START + timedelta(minutes=index)
        delay = negative_delay_a if in_a[index] and not approved[index] else 1.0
        key = f"app-{index}"
        records.append({"id": key, "time": opened, "kind": "APPLY", "group": "A" if in_a[index] else "B"})
        records.append({"id": key, "time": opened + timedelta(hours=delay), "kind": "DECISION", "approved": bool(approved[index])})
    records.sort(key=lambda record: (record["time"], record["id"]))
    for record in records:
        record["time"] = record["time"].isoformat().replace("+00:00", "Z")
    return records


DELAYED_SPEC: dict[str, Any] = {
    "monitor": "loans",
    "input": {"time": "time", "key": "id", "kind": "kind", "kinds": {"APPLY": {"group": "str"}, "DECISION": {"approved": "bool"}}},
    "trial": {"opens_on": ["APPLY"], "close_on": ["DECISION"], "close_after": "2d"},
    "variables": {"group": {"first": "APPLY", "field": "group"}, "approved": {"first": "DECISION", "field": "approved", "default": False}},
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "approved", "groups": ["A", "B"], "threshold": 0.1},
    "estimator": {"verdict": "anytime", "alpha": 0.05},
    "evaluate": {"every": "1h"},
    "publish": {"min_cell": 1},
}
"""Loan applications opened by APPLY and closed by their DECISION, judged by anytime verdicts every hour."""
