"""Seeded seminar-assignment scenarios and four assignment algorithms, as event streams for `specs/seminar_conditional_statistical_parity.yaml`.

The setting of the RTLola seminar study (TACAS 2025): a few seminars with fixed places, fewer places
than applicants, applicants arriving in order, each applying to one seminar. A scenario has 3–5
seminars holding 40–60 % of the applicants in all, split as evenly as possible; every applicant is
female or male with probability 1/2, has a qualification 1..10 drawn independently of gender (unless
`qualification_gap` raises the men's), and chooses a seminar uniformly. After the application
deadline an algorithm decides, per seminar, whom to accept:

- FCFS: the earliest applicants, in arrival order, while places last;
- Randomize: a uniformly random subset of the size of the places;
- Qualification: the most qualified, ties going to the earlier applicant;
- EqualGender: places split between the genders in proportion to their applicants (the split that
  makes the two acceptance rates closest), applicants drawn at random within each gender.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from fairstream.records.timefmt import SECOND, format_instant

START = datetime(2024, 1, 1, tzinfo=UTC)
"""When the first application arrives."""

APPLICATION_WINDOW = 12 * 3600
ACCEPT_WINDOW = 3600
"""Seconds over which applications arrive (evenly spread, then the deadline) and after the deadline over which acceptances are sent."""

GENDERS = ("female", "male")
QUALIFICATION = (1, 10)
SEMINARS = (3, 5)
PLACE_SHARE = (0.4, 0.6)
"""Ranges (inclusive) of a scenario's draws: qualification, number of seminars, places as a share of the applicants."""


@dataclass(frozen=True)
class Applicant:
    gender: str
    qualification: int
    seminar: int
    """1-based number of the seminar applied to."""


@dataclass(frozen=True)
class Scenario:
    """Applicants in arrival order and the places of each seminar (seminar n has `places[n - 1]`)."""

    applicants: tuple[Applicant, ...]
    places: tuple[int, ...]

    def applying(self, seminar: int) -> list[int]:
        """Indices of the applicants to `seminar`, in arrival order."""
        return [index for index, applicant in enumerate(self.applicants) if applicant.seminar == seminar]


Algorithm = Callable[[Scenario, np.random.Generator], frozenset[int]]
"""Whom to accept: indices into the scenario's applicants; `rng` is used only by the random algorithms."""


def draw_scenario(seed: int, applicants: int = 100, *, qualification_gap: int = 0) -> Scenario:
    """A scenario of `applicants` applicants; the same seed gives the same scenario.

    `qualification_gap` adds that much to every man's qualification (capped at 10), so that
    accepting the most qualified favours men.

    >>> scenario = draw_scenario(0, 10)
    >>> len(scenario.applicants), sum(scenario.places) < 10
    (10, True)
    """
    if applicants < 1:
        raise ValueError(f"a scenario needs at least one applicant; got {applicants}")
    rng = _rngs(seed)[0]
    seminars = int(rng.integers(SEMINARS[0], SEMINARS[1], endpoint=True))
    low, high = (int(np.ceil(share * applicants)) for share in PLACE_SHARE)
    total = int(rng.integers(low, high, endpoint=True))
    places = tuple(total // seminars + (number < total % seminars) for number in range(seminars))
    male = rng.random(applicants) < 0.5
    scores = rng.integers(QUALIFICATION[0], QUALIFICATION[1], size=applicants, endpoint=True)
    scores = np.minimum(scores + qualification_gap * male, QUALIFICATION[1])
    seminar = rng.integers(1, seminars, size=applicants, endpoint=True)
    people = tuple(
        Applicant(GENDERS[is_male], score, number)
        for is_male, score, number in zip(male.tolist(), scores.tolist(), seminar.tolist(), strict=True)
    )
    return Scenario(people, places)


def fcfs(scenario: Scenario, rng: np.random.Generator) -> frozenset[int]:
    """Per seminar, the earliest applicants while places last."""
    return _per_seminar(scenario, lambda indices, places: indices[:places])


def randomize(scenario: Scenario, rng: np.random.Generator) -> frozenset[int]:
    """Per seminar, a uniformly random subset of the applicants, as large as the places allow."""
    return _per_seminar(scenario, lambda indices, places: _sample(rng, indices, places))


def qualification(scenario: Scenario, rng: np.random.Generator) -> frozenset[int]:
    """Per seminar, the most qualified applicants; the earlier applicant wins a tie."""
    people = scenario.applicants
    return _per_seminar(scenario, lambda indices, places: sorted(indices, key=lambda i: (-people[i].qualification, i))[:places])


def equal_gender(scenario: Scenario, rng: np.random.Generator) -> frozenset[int]:
    """Per seminar, places split between the genders so that their acceptance rates are closest; random applicants within each gender."""
    people = scenario.applicants

    def pick(indices: list[int], places: int) -> list[int]:
        women = [i for i in indices if people[i].gender == GENDERS[0]]
        men = [i for i in indices if people[i].gender == GENDERS[1]]
        quota = gender_quota(len(women), len(men), places)
        return _sample(rng, women, quota) + _sample(rng, men, min(places, len(indices)) - quota)

    return _per_seminar(scenario, pick)


def gender_quota(first: int, second: int, places: int) -> int:
    """Places for the first of two groups that make the two acceptance rates closest: the nearest whole number to its proportional share.

    The rates q/first and (places − q)/second are closest where q = places·first/(first + second),
    so rounding that share keeps them within half an applicant of each group apart.

    >>> gender_quota(30, 10, 8), gender_quota(3, 3, 3), gender_quota(2, 5, 10)
    (6, 2, 2)
    """
    applicants = first + second
    if places >= applicants:
        return first
    nearest = int(np.floor(places * first / applicants + 0.5))
    return min(max(nearest, places - second), first)


ALGORITHMS: dict[str, Algorithm] = {
    "FCFS": fcfs,
    "Randomize": randomize,
    "Qualification": qualification,
    "EqualGender": equal_gender,
}
"""The assignment algorithms of the study, by the names it reports them under."""


def assign(algorithm: str, scenario: Scenario, seed: int) -> frozenset[int]:
    """The applicants `algorithm` accepts in `scenario`; random choices are drawn from `seed`, apart from the scenario's own draws."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown assignment algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[algorithm](scenario, _rngs(seed)[1])


def seminar_events(
    algorithm: str, seed: int, applicants: int = 100, *, qualification_gap: int = 0, start: datetime = START
) -> list[dict[str, Any]]:
    """The event stream of one scenario assigned by `algorithm`, in event-time order; the same arguments give the same list.

    - `APPLY` (`id`, `time`, `gender`, `qualification`, `seminar`, `seats` = the seminar's places) per
      applicant, spread evenly over the 12 hours from `start`;
    - `SEMINAR` (`id` = `seminar-<n>`, `seminar`, `places`, `applicants` = applications received) per
      seminar at the deadline, 12 hours after `start`: what the registration knows once it closes;
    - `ACCEPT` (`id`, `time`) per accepted applicant, in arrival order, within the hour after the deadline.

    Every seed gives the same scenario to every algorithm, so the algorithms are compared on equal inputs.

    >>> events = seminar_events("FCFS", seed=0)
    >>> [sum(event["event"] == kind for event in events) for kind in ("APPLY", "SEMINAR", "ACCEPT")]
    [100, 5, 59]
    >>> events[0]
    {'event': 'APPLY', 'id': '1', 'time': '2024-01-01T00:00:00Z', 'gender': 'male', 'qualification': 3, 'seminar': 1, 'seats': 12}
    """
    scenario = draw_scenario(seed, applicants, qualification_gap=qualification_gap)
    accepted = sorted(assign(algorithm, scenario, seed))
    origin = int(start.timestamp()) * SECOND
    deadline = origin + APPLICATION_WINDOW * SECOND
    events: list[dict[str, Any]] = [
        {
            "event": "APPLY",
            "id": str(index + 1),
            "time": format_instant(origin + index * APPLICATION_WINDOW // applicants * SECOND),
            "gender": person.gender,
            "qualification": person.qualification,
            "seminar": person.seminar,
            "seats": scenario.places[person.seminar - 1],
        }
        for index, person in enumerate(scenario.applicants)
    ]
    events.extend(
        {
            "event": "SEMINAR",
            "id": f"seminar-{number}",
            "time": format_instant(deadline),
            "seminar": number,
            "places": places,
            "applicants": len(scenario.applying(number)),
        }
        for number, places in enumerate(scenario.places, 1)
    )
    events.extend(
        {"event": "ACCEPT", "id": str(index + 1), "time": format_instant(deadline + (1 + rank * ACCEPT_WINDOW // len(accepted)) * SECOND)}
        for rank, index in enumerate(accepted)
    )
    return events


def _rngs(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for a seed's scenario and for the random algorithms' choices."""
    scenario, choices = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(scenario), np.random.default_rng(choices)


def _per_seminar(scenario: Scenario, pick: Callable[[list[int], int], list[int]]) -> frozenset[int]:
    """Apply `pick(applicant indices in arrival order, places)` to every seminar and join the choices."""
    accepted: set[int] = set()
    for number, places in enumerate(scenario.places, 1):
        accepted.update(pick(scenario.applying(number), places))
    return frozenset(accepted)


def _sample(rng: np.random.Generator, indices: list[int], size: int) -> list[int]:
    """`size` of `indices` drawn uniformly without replacement (all of them when there are fewer)."""
    if size >= len(indices):
        return list(indices)
    return [indices[i] for i in rng.choice(len(indices), size=size, replace=False).tolist()]
