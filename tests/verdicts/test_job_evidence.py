"""The job's merged alarm: the same instant and record however the monitors' evaluations interleave, raised where the
average of their merged evidence first reaches 1/α, and never before every monitor has reported past that instant."""

from __future__ import annotations

import math
from itertools import permutations

from fairstream.verdicts.many_pairs.job import JobEvidence

ALPHA = 0.05
EVALUATIONS = {
    "a": [(60, 1.0), (120, 2.5), (180, 3.4), (240, 3.5)],
    "b": [(90, 0.5), (180, 2.0), (270, 2.6)],
}
"""Each monitor's (instant, log M) at its evaluations, in event time."""


def crossing() -> tuple[int, float]:
    """The first instant any monitor evaluates at where the average of each one's latest M (1 before its first) is at
    least 1/α, computed from the table by hand's rule."""
    for at in sorted({t for entries in EVALUATIONS.values() for t, _ in entries}):
        latest = [max(((t, v) for t, v in entries if t <= at), default=(0, 0.0))[1] for entries in EVALUATIONS.values()]
        average = sum(math.exp(v) for v in latest) / len(latest)
        if average >= 1 / ALPHA:
            return at, average
    raise AssertionError("no crossing")


def feed(order: list[tuple[str, int, float, bool]]) -> list[tuple[int, dict]]:
    evidence, found = JobEvidence(("a", "b"), ALPHA), []
    for monitor, instant, value, final in order:
        result = evidence.take(monitor, instant, value, final)
        if result is not None:
            found.append(result)
    assert evidence.done
    return found


def test_every_interleaving_raises_the_same_alarm_at_the_first_crossing():
    at, average = crossing()
    streams = {name: [(name, t, v, False) for t, v in entries] + [(name, 300, 0.0, True)] for name, entries in EVALUATIONS.items()}
    seen = set()
    for pattern in set(permutations("a" * len(streams["a"]) + "b" * len(streams["b"]))):
        queues = {name: list(entries) for name, entries in streams.items()}
        found = feed([queues[name].pop(0) for name in pattern])
        assert len(found) == 1
        instant, body = found[0]
        assert instant == at and math.isclose(body["log_evidence"], math.log(average))
        seen.add((instant, tuple((entry["monitor"], entry["log_evidence"]) for entry in body["monitors"])))
    assert len(seen) == 1


def test_nothing_is_judged_before_every_monitor_has_reported_past_it():
    evidence = JobEvidence(("a", "b"), ALPHA)
    assert evidence.take("a", 60, 10.0) is None  # far past 1/α alone, but b has not reported yet
    assert evidence.take("b", 30, 0.0) is None  # b has reached 30 only: 60 is not settled
    found = evidence.take("b", 90, 0.0)
    assert found is not None and found[0] == 60
