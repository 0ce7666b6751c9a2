"""A seeded stream of credit applications handled per applicant and branch, for `specs/credit_applications.yaml`.

An applicant (group a or b with probability 1/2) applies at one branch or at both; each branch is its own trial. A
branch may first receive a withdrawn draft (amount 0), then the real application with an amount and a score 1..10.
The branch contacts the applicant a few times over the first weeks, may send interim decisions, and sends a final
decision after a delay whose mean depends on the group; some applications are never decided. Approval depends on
the score and, with `approval_gap`, on the group; `delay_gap` adds days to group b's delays.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from fairstream.records.timefmt import DAY, SECOND, format_instant

START = datetime(2024, 1, 1, tzinfo=UTC)
"""When the first application may arrive; applications arrive over the following `SPAN_DAYS`."""

SPAN_DAYS = 240
GROUPS = ("a", "b")
BRANCHES = ("north", "south")
AMOUNTS = (1_000, 2_500, 5_000, 10_000, 20_000)
CHANNELS = ("phone", "mail", "branch")


@dataclass(frozen=True)
class CreditSettings:
    """How the branches treat the two groups: the approval probability's gap and the extra days of b's decisions."""

    approval_gap: float = 0.15
    delay_gap: float = 4.0
    base_delay: float = 5.0
    undecided: float = 0.05


def credit_events(applicants: int, seed: int, settings: CreditSettings = CreditSettings()) -> list[dict[str, Any]]:
    """Events (`event`, `applicant_id`, `branch`, `time` and the kind's fields) of `applicants` applicants in time
    order; the same arguments give the same list.

    >>> sorted({event["event"] for event in credit_events(40, seed=1)})
    ['APPLY', 'CONTACT', 'DECISION']
    """
    rng = np.random.default_rng(seed)
    origin = int(START.timestamp()) * 1000
    events: list[dict[str, Any]] = []
    for index in range(applicants):
        group = GROUPS[int(rng.random() < 0.5)]
        branches = BRANCHES if rng.random() < 0.4 else (BRANCHES[int(rng.random() < 0.5)],)
        applied = origin + int(rng.random() * SPAN_DAYS * DAY)
        for branch in branches:
            key = {"applicant_id": f"A{index:05d}", "branch": branch}
            events.extend(_application(rng, key, group, applied + int(rng.random() * 3 * DAY), settings))
    events.sort(key=lambda event: (event["time"], event["applicant_id"], event["branch"]))
    for event in events:
        event["time"] = format_instant(event["time"])
    return events


def _application(rng: np.random.Generator, key: dict[str, str], group: str, time: int, settings: CreditSettings) -> list[dict[str, Any]]:
    """One branch's events for one applicant, with times in milliseconds (whole seconds)."""

    def event(kind: str, at: int, **fields: Any) -> dict[str, Any]:
        return {"event": kind, **key, "time": at - at % SECOND, **fields}

    events = []
    if rng.random() < 0.2:  # a draft, withdrawn: it opens no trial
        events.append(event("APPLY", time - int(rng.random() * DAY), group=group, amount=0, score=0))
    score = int(rng.integers(1, 11))
    events.append(event("APPLY", time, group=group, amount=int(rng.choice(AMOUNTS)), score=score))
    for _ in range(int(rng.integers(0, 5))):
        events.append(event("CONTACT", time + int(rng.random() * 45 * DAY), channel=str(rng.choice(CHANNELS))))
    if rng.random() < settings.undecided:
        return events
    delay = settings.base_delay + (settings.delay_gap if group == "b" else 0.0)
    decided = time + SECOND + min(int(rng.exponential(delay) * DAY), 80 * DAY)
    for _ in range(int(rng.integers(0, 3))):
        events.append(event("DECISION", time + int(rng.random() * (decided - time - SECOND)), approved=bool(rng.random() < 0.5), final=False))
    p_approve = 0.25 + 0.05 * score - (settings.approval_gap if group == "b" else 0.0)
    events.append(event("DECISION", decided, approved=bool(rng.random() < p_approve), final=True))
    return events
