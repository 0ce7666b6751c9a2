"""A seeded stream of hiring decisions, one independent trial per applicant, for `specs/hiring_demographic_parity.yaml`.

Each applicant is male or female with probability 1/2 (or a given share) and is hired with the probability of their
gender, independently of everyone else: the setting of the RTLola hiring experiment (TACAS 2025),
where equal probabilities are fair and 0.5 vs. 0.2 violates demographic parity.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from fairstream.records.timefmt import SECOND, format_instant

START = datetime(2024, 1, 1, tzinfo=UTC)
"""Time of the first decision; the next ones follow one minute apart."""

GENDERS = ("male", "female")


def hiring_decisions(
    n: int, p_male: float, p_female: float, seed: int, *, start: datetime = START, share_male: float = 0.5
) -> list[dict[str, Any]]:
    """`n` DECISION events (`id`, `time`, `gender`, `hired`), one a minute from `start`, each applicant male with
    probability `share_male`; the same arguments give the same list.

    The first k decisions do not depend on `n`: a seed's stream grows, it is not redrawn.

    >>> hiring_decisions(2, p_male=1.0, p_female=0.0, seed=0)[1]
    {'event': 'DECISION', 'id': '2', 'time': '2024-01-01T00:01:00Z', 'gender': 'male', 'hired': True}
    """
    for name, p in (("p_male", p_male), ("p_female", p_female)):
        if not 0 <= p <= 1:
            raise ValueError(f"{name} is a probability in [0, 1]; got {p}")
    draws = np.random.default_rng(seed).random((n, 2))  # one row per applicant, so a shorter stream is a prefix of a longer one
    male = draws[:, 0] < share_male
    hired = draws[:, 1] < np.where(male, p_male, p_female)
    origin = int(start.timestamp()) * SECOND
    return [
        {
            "event": "DECISION",
            "id": str(index + 1),
            "time": format_instant(origin + 60 * SECOND * index),
            "gender": "male" if is_male else "female",
            "hired": is_hired,
        }
        for index, (is_male, is_hired) in enumerate(zip(male.tolist(), hired.tolist()))
    ]


def labelled_decisions(
    n: int,
    qualified: tuple[float, float],
    tpr: tuple[float, float],
    fpr: tuple[float, float],
    seed: int,
    *,
    delay: int = 0,
    share_male: float = 0.5,
) -> list[dict[str, Any]]:
    """`n` DECISION events a minute apart as `hiring_decisions` makes them, each applicant qualified with the probability
    of their gender (`qualified`, male first) and hired with the true- or false-positive rate of their gender; each
    followed by a LABEL event (`qualified`: bool) `delay` decisions later (just before that decision's successor)."""
    draws = np.random.default_rng(seed).random((n, 3))
    origin = int(START.timestamp()) * SECOND
    decisions: list[dict[str, Any]] = []
    labels: list[tuple[int, dict[str, Any]]] = []
    for index, (group_draw, qualified_draw, hire_draw) in enumerate(draws.tolist()):
        male = group_draw < share_male
        side = 0 if male else 1
        is_qualified = qualified_draw < qualified[side]
        hired = hire_draw < (tpr[side] if is_qualified else fpr[side])
        at = origin + 60 * SECOND * index
        decisions.append({"event": "DECISION", "id": str(index + 1), "time": format_instant(at), "gender": GENDERS[side], "hired": hired})
        labels.append((index + delay, {"event": "LABEL", "id": str(index + 1), "time": format_instant(at + 60 * SECOND * delay + 30 * SECOND), "qualified": is_qualified}))
    out: list[dict[str, Any]] = []
    pending = iter(labels)
    upcoming = next(pending, None)
    for index, decision in enumerate(decisions):
        out.append(decision)
        while upcoming is not None and upcoming[0] <= index:
            out.append(upcoming[1])
            upcoming = next(pending, None)
    if upcoming is not None:  # the labels due after the last decision
        out.append(upcoming[1])
    out.extend(label for _, label in pending)
    return out


def group_decisions(n: int, rates: dict[str, float], seed: int, *, shares: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """`n` DECISION events (`id`, `time`, `group`, `approved`) a minute apart, each applicant of a group drawn by
    `shares` (default equal) and approved with that group's rate; the same arguments give the same list."""
    names = list(rates)
    weights = np.array([shares[name] for name in names] if shares else [1.0] * len(names))
    draws = np.random.default_rng(seed).random((n, 2))
    chosen = np.searchsorted(np.cumsum(weights / weights.sum())[:-1], draws[:, 0], side="right")
    origin = int(START.timestamp()) * SECOND
    return [
        {"event": "DECISION", "id": str(index + 1), "time": format_instant(origin + 60 * SECOND * index), "group": names[group], "approved": bool(draw < rates[names[group]])}
        for index, (group, draw) in enumerate(zip(chosen.tolist(), draws[:, 1].tolist()))
    ]


@dataclass(frozen=True)
class GenderCount:
    """Applicants and hires of one gender in a decision stream."""

    gender: str
    applicants: int
    hired: int

    @property
    def hire_rate(self) -> float | None:
        return self.hired / self.applicants if self.applicants else None


def count_by_gender(decisions: Iterable[dict[str, Any]]) -> list[GenderCount]:
    """Applicants and hires per gender, male first."""
    applicants = dict.fromkeys(GENDERS, 0)
    hired = dict.fromkeys(GENDERS, 0)
    for decision in decisions:
        applicants[decision["gender"]] += 1
        hired[decision["gender"]] += decision["hired"]
    return [GenderCount(gender, applicants[gender], hired[gender]) for gender in GENDERS]
