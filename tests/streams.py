"""Streams that exercise the hard cases of partitioned input, for the determinism matrix and the fault tests.

Keys are chosen by where Kafka puts them (murmur2 of the key modulo the partition count), so that on a topic of 2
or 4 partitions some partitions fall silent for long stretches of event time and one never sees an event; one key
is hot; the tail is sparse; and events near the lateness bound sit right after the latest event so far of their
partition, so that whether they are late does not depend on how the topic is partitioned.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import numpy as np
from kafka.partitioner.default import murmur2

from fairstream.connectors.synthetic.compas_like import DECILE_WEIGHTS, RACE_WEIGHTS, RACES, RECIDIVISM_BY_DECILE
from fairstream.connectors.synthetic.hiring import GENDERS
from fairstream.connectors.synthetic.hiring import START as HIRING_START
from fairstream.records.timefmt import DAY, SECOND, format_instant

LATENESS_DAYS = 2
"""The allowed lateness of the specs these streams go with."""

START = 1_420_070_400 * SECOND  # 2015-01-01T00:00:00Z


def residue(key: str) -> int:
    """The key's partition on a topic of 4 partitions (and, modulo 2, of 2): what Kafka's default partitioner picks."""
    return (murmur2(key.encode()) & 0x7FFFFFFF) % 4


class Keys:
    """Fresh keys of a chosen residue: `take(r)` never repeats a key."""

    def __init__(self, prefix: str):
        self._counter = itertools.count(1)
        self._prefix = prefix
        self._spare: dict[int, list[str]] = {0: [], 1: [], 2: [], 3: []}

    def take(self, wanted: int) -> str:
        while not self._spare[wanted]:
            key = f"{self._prefix}{next(self._counter)}"
            self._spare[residue(key)].append(key)
        return self._spare[wanted].pop(0)


def _screen(key: str, time: int, rng: random.Random, fair: bool) -> dict[str, Any]:
    race = rng.choices(RACES, RACE_WEIGHTS)[0]
    weights = DECILE_WEIGHTS["Caucasian" if fair else race]
    score = rng.choices(range(1, 11), weights)[0]
    sex, age = rng.choice(("Male", "Female")), rng.choice(("25 - 45", "Greater than 45", "Less than 25"))
    return {"event": "SCREEN", "id": key, "date": format_instant(time), "race": race, "sex": sex, "age_cat": age, "decile_score": score}


def _recidivism(key: str, time: int) -> dict[str, Any]:
    return {"event": "RECIDIVISM", "id": key, "date": format_instant(time)}


def hard_compas_events(seed: int, *, per_day: int = 12, days: int = 900) -> list[Any]:
    """COMPAS-shaped events in the order a producer sends them (mostly time order), with every hard case.

    - days 0–300: all residues but 3, scores biased by race (equalized odds violated);
    - days 300–500: only residues 0 and 2, so partition 1 of 2 (and 1, 3 of 4) is silent for 200 days;
    - days 500–`days`: scores drawn alike for every race (the violation recovers in a sliding window);
    - a hot key with a RECIDIVISM event every 5 hours throughout;
    - after the last screening, a sparse tail of RECIDIVISM events, weeks apart, from one residue, for two more years;
    - every 37 days, right after an event, a fresh key of its residue screened exactly at the lateness bound, one
      second inside it (on time) and one second beyond it (late); and a few records that are not valid events.
    """
    rng = random.Random(seed)
    keys = Keys("d")
    hot = keys.take(2)
    lateness = LATENESS_DAYS * DAY
    timeline: list[tuple[int, int, dict[str, Any]]] = []  # (time, order, record)
    order = itertools.count()
    screened: list[tuple[int, str]] = []
    for day in range(days):
        allowed = (0, 2) if 300 <= day < 500 else (0, 1, 2)
        for _ in range(rng.randint(per_day // 2, per_day * 3 // 2)):
            time = START + day * DAY + rng.randrange(DAY // SECOND) * SECOND
            key = keys.take(rng.choice(allowed))
            record = _screen(key, time, rng, fair=day >= 500)
            timeline.append((time, next(order), record))
            screened.append((time, key))
            if rng.random() < RECIDIVISM_BY_DECILE[record["decile_score"] - 1]:
                delay = DAY + int(rng.expovariate(1 / (200 * DAY)))
                if delay < 700 * DAY:
                    timeline.append((time + delay, next(order), _recidivism(key, time + delay)))
    timeline.append((START, next(order), _screen(hot, START, rng, fair=True)))
    for step in range(1, days * 24 // 5):
        time = START + step * 5 * 3600 * SECOND
        timeline.append((time, next(order), _recidivism(hot, time)))
    tail_time = START + days * DAY
    tail_keys = [key for _, key in screened if residue(key) == 0]
    while tail_time < START + (days + 730) * DAY:
        tail_time += rng.randint(10, 60) * DAY
        timeline.append((tail_time, next(order), _recidivism(rng.choice(tail_keys), tail_time)))
    timeline.sort(key=lambda item: item[:2])

    out: list[Any] = []
    next_hazard = START + 5 * DAY
    for time, _, record in timeline:
        out.append(record)
        if time >= next_hazard and time < START + days * DAY:
            next_hazard = time + 37 * DAY
            near = residue(record["id"])
            for offset in (0, -SECOND, SECOND):  # at the bound and inside it: on time; beyond it: late
                out.append(_screen(keys.take(near), time - lateness - offset, rng, fair=False))
    for index, bad in enumerate(_bad_records(keys)):
        out.insert(len(out) * (index + 1) // 6, bad)
    return out


def _bad_records(keys: Keys) -> Iterator[Any]:
    """Records a producer should not send: each is a dead letter with its reason, on any partitioning."""
    at = format_instant(START + 100 * DAY)
    yield {"event": "SENTENCE", "id": keys.take(0), "date": at}
    yield {"event": "SCREEN", "id": keys.take(1), "date": at, "race": "Other", "sex": "Male", "age_cat": "25 - 45", "decile_score": "high"}
    yield {"event": "SCREEN", "id": keys.take(2), "date": "yesterday", "race": "Other", "sex": "Male", "age_cat": "25 - 45", "decile_score": 3}
    yield {"event": "SCREEN", "id": keys.take(0), "date": at, "decile_score": 3}
    yield '{"event": "SCREEN", "id": "broken'


def hard_hiring_decisions(seed: int, n: int = 3000) -> list[dict[str, Any]]:
    """Biased hiring decisions a minute apart, keys chosen so that partitions fall silent and one stays empty."""
    rng = random.Random(seed)
    keys = Keys("a")
    start = START
    out = []
    for index in range(n):
        allowed = (0,) if n // 3 <= index < n // 2 else (0, 1, 2)
        male = rng.random() < 0.5
        out.append(
            {
                "event": "DECISION",
                "id": keys.take(rng.choice(allowed)),
                "time": format_instant(start + index * 60 * SECOND),
                "gender": "male" if male else "female",
                "hired": rng.random() < (0.5 if male else 0.2),
            }
        )
    return out


def compas_spec(path, *, window: bool = True) -> str:
    """The bundled COMPAS equalized-odds spec for the two large groups, with the lateness these streams need and, by default, a 120-day sliding window."""
    import yaml

    from fairstream.paths import SPECS_DIR

    spec = yaml.safe_load((SPECS_DIR / "compas_equalized_odds.yaml").read_text())
    spec["input"]["lateness"] = f"{LATENESS_DAYS}d"
    spec["estimator"]["hysteresis"] = 0.02
    spec["metric"]["groups"] = ["African-American", "Caucasian"]
    if window:
        spec["window"] = {"kind": "sliding", "length": "120d"}
    path.write_text(yaml.safe_dump(spec))
    return str(path)


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
    origin = int(HIRING_START.timestamp()) * SECOND
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
    origin = int(HIRING_START.timestamp()) * SECOND
    return [
        {"event": "DECISION", "id": str(index + 1), "time": format_instant(origin + 60 * SECOND * index), "group": names[group], "approved": bool(draw < rates[names[group]])}
        for index, (group, draw) in enumerate(zip(chosen.tolist(), draws[:, 1].tolist()))
    ]
