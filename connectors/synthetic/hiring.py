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


@dataclass(frozen=True)
class HiringMaker:
    """A decision maker of the hiring stream: the raw hire rates of men and women, and the share of men."""

    p_male: float
    p_female: float
    share_male: float = 0.5


def drifting_hiring_decisions(
    n: int, start: HiringMaker, end: HiringMaker, seed: int, *, drift_from: int = 0, over: int | None = None
) -> list[dict[str, Any]]:
    """`n` DECISION events as `hiring_decisions` makes them, by a decision maker that is `start` up to decision
    `drift_from` and then moves linearly to `end` over `over` decisions (by default, at the last decision; 1: a step):
    the stream a shield's assumption checks face."""
    draws = np.random.default_rng(seed).random((n, 2))
    span = max(n - 1 - drift_from, 1) if over is None else over
    progress = np.clip((np.arange(n) - drift_from + (over is not None)) / span, 0.0, 1.0)

    def moving(first: float, last: float) -> np.ndarray:
        return first + progress * (last - first)

    male = draws[:, 0] < moving(start.share_male, end.share_male)
    hired = draws[:, 1] < np.where(male, moving(start.p_male, end.p_male), moving(start.p_female, end.p_female))
    origin = int(START.timestamp()) * SECOND
    return [
        {"event": "DECISION", "id": str(index + 1), "time": format_instant(origin + 60 * SECOND * index), "gender": GENDERS[not is_male], "hired": is_hired}
        for index, (is_male, is_hired) in enumerate(zip(male.tolist(), hired.tolist()))
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
