"""A seeded, streaming generator of COMPAS-shaped events (SCREEN, RECIDIVISM), for benchmarks and demos without the real file.

The stream matches `specs/compas_equalized_odds.yaml`: every defendant gets one SCREEN event
(`race`, `sex`, `age_cat`, `decile_score` 1..10) and, with a probability that rises with the score,
one RECIDIVISM event after a random delay (about 8 % of them more than 730 days later). Group
proportions, per-group score distributions and the score→recidivism curve follow the shape of
ProPublica's Broward County data, so the scores are calibrated across groups while the error rates
differ between them: equalized odds is violated, as in the real data. Events come out in
time order; memory holds only the RECIDIVISM events not yet due, never the whole stream.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import random
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

START = datetime(2013, 1, 1, tzinfo=UTC)
"""Default time of the first screening (the first screening date in the COMPAS file)."""

DAY = 86_400

RACES = ("African-American", "Caucasian", "Hispanic", "Other", "Asian", "Native American")
RACE_WEIGHTS = (3696, 2454, 637, 377, 32, 18)
"""Defendants per group in the COMPAS file."""

DECILE_WEIGHTS = {
    "African-American": (398, 393, 346, 385, 365, 384, 400, 359, 380, 286),
    "Caucasian": (681, 361, 273, 285, 241, 194, 143, 114, 98, 64),
    "Hispanic": (196, 113, 86, 52, 52, 37, 34, 26, 20, 21),
    "Other": (150, 66, 36, 46, 22, 21, 10, 10, 8, 8),
    "Asian": (16, 5, 6, 1, 2, 4, 2, 3, 1, 2),
    "Native American": (1, 5, 2, 2, 1, 3, 5, 2, 3, 4),
}
"""Relative frequency of decile scores 1..10 per group (COMPAS counts; +1 per score for the two small groups)."""

RECIDIVISM_BY_DECILE = (0.23, 0.35, 0.42, 0.47, 0.51, 0.59, 0.63, 0.72, 0.72, 0.79)
"""Probability of a RECIDIVISM event given decile score 1..10, the same for every group (about 48 % overall)."""

SEXES = ("Male", "Female")
SEX_WEIGHTS = (807, 193)
AGE_CATS = ("25 - 45", "Greater than 45", "Less than 25")
AGE_WEIGHTS = (570, 218, 212)

MEAN_DELAY_DAYS = 290
"""Mean days from screening to re-offence (exponential, at least one day): P(delay > 730 d) ≈ 8 %."""


class _Choice:
    """A weighted draw from a fixed list with precomputed cumulative weights."""

    def __init__(self, values: Iterable[Any], weights: Iterable[float]):
        self.values = tuple(values)
        self.cumulative = tuple(itertools.accumulate(weights))

    def draw(self, rng: random.Random) -> Any:
        return self.values[bisect.bisect_right(self.cumulative, rng.random() * self.cumulative[-1])]


def compas_like_events(
    n_defendants: int,
    seed: int,
    *,
    start: datetime = START,
    per_day: float = 10.0,
) -> Iterator[dict[str, Any]]:
    """Events of `n_defendants` defendants screened as a Poisson process of `per_day` screenings a day from `start`, in time order.

    The same arguments always give the same stream. Dates are ISO 8601 UTC date-times (`2013-01-01T06:12:09Z`);
    ids are the defendant's number as a string. A naive `start` is read as UTC.
    """
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    rng = random.Random(seed)
    race, sex, age = _Choice(RACES, RACE_WEIGHTS), _Choice(SEXES, SEX_WEIGHTS), _Choice(AGE_CATS, AGE_WEIGHTS)
    deciles = {name: _Choice(range(1, 11), weights) for name, weights in DECILE_WEIGHTS.items()}
    pending: list[tuple[float, int]] = []  # (time, defendant) of RECIDIVISM events not yet emitted
    origin = start.timestamp()
    now = origin
    for defendant in range(1, n_defendants + 1):
        now += rng.expovariate(per_day / DAY)
        while pending and pending[0][0] <= now:
            yield _recidivism(*heapq.heappop(pending))
        group = race.draw(rng)
        score = deciles[group].draw(rng)
        yield {
            "event": "SCREEN",
            "id": str(defendant),
            "date": _iso(now),
            "race": group,
            "sex": sex.draw(rng),
            "age_cat": age.draw(rng),
            "decile_score": score,
        }
        if rng.random() < RECIDIVISM_BY_DECILE[score - 1]:
            delay = DAY + rng.expovariate(1 / ((MEAN_DELAY_DAYS - 1) * DAY))
            heapq.heappush(pending, (now + delay, defendant))
    while pending:
        yield _recidivism(*heapq.heappop(pending))


def _recidivism(time: float, defendant: int) -> dict[str, Any]:
    return {"event": "RECIDIVISM", "id": str(defendant), "date": _iso(time)}


def _iso(time: float) -> str:
    return datetime.fromtimestamp(int(time), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
