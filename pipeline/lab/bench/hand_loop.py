"""The benchmark's computation written by hand as one plain loop: COMPAS equalized odds over JSON lines, from the
spec's meaning alone (no code shared with the monitor). It is the speed a person gets without a dataflow, and an
independent check of the monitor's daily gaps.

What it computes, as `specs/compas_equalized_odds.yaml` says: a SCREEN event opens a defendant's trial (race, high
risk = decile score > 6); a RECIDIVISM event 0–730 days after it marks the trial reoffended; the trial closes 730 days
after it opened and counts, on the UTC day it closes by, towards its race's false-positive rate (not reoffended) or
true-positive rate (reoffended). Each day from the first close on, the rates are estimated with the prior 0.5 at
confidence 100 and the gap between the highest and lowest race of at least 100 trials (the evidence floor ⌈1/ε²⌉) is
compared with ε = 0.1. A day is final once an event
later than its midnight has been read; at the end every open trial closes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from datetime import date

import orjson

DAY_MS = 86_400_000
WINDOW_MS = 730 * DAY_MS
PRIOR, CONFIDENCE, THRESHOLD = 0.5, 100.0, 0.1
FLOOR = 100
EPOCH_ORDINAL = date(1970, 1, 1).toordinal()

Gaps = dict[int, tuple[float | None, float | None]]
"""Per evaluated day (epoch milliseconds of its midnight): the false-positive and true-positive rate gaps (None while
fewer than two races have reached the floor)."""


def _gap(cells: dict[str, list[int]]) -> float | None:
    estimates = [(high + PRIOR * CONFIDENCE) / (n + CONFIDENCE) for high, n in cells.values() if n >= FLOOR]
    return max(estimates) - min(estimates) if len(estimates) >= 2 else None


def _ceil_day(ms: int) -> int:
    return -(-ms // DAY_MS) * DAY_MS


def daily_gaps(lines: Iterable[bytes]) -> tuple[Gaps, int, int]:
    """The gaps of every evaluated day, the days in violation, and the records rejected as malformed or late."""
    midnight: dict[str, int] = {}  # "YYYY-MM-DD" -> epoch ms, computed once per date
    trials: dict[str, list] = {}  # id -> [opened, race, high risk, reoffended]
    closing: deque[tuple[int, str]] = deque()  # (closes at, id) in opening order
    fpr: dict[str, list[int]] = {}  # race -> [high risk, trials]
    tpr: dict[str, list[int]] = {}
    gaps: Gaps = {}
    violations = rejected = 0
    next_day: int | None = None
    latest = -(2**62)

    def evaluate(day: int) -> None:
        nonlocal violations
        fp, tp = _gap(fpr), _gap(tpr)
        gaps[day] = (fp, tp)
        violations += (fp is not None and fp > THRESHOLD) or (tp is not None and tp > THRESHOLD)

    def close_through(through: int | None) -> None:
        """Close the trials due by `through` (all: None), evaluating each day before the first trial of a later day."""
        nonlocal next_day
        while closing and (through is None or closing[0][0] <= through):
            closes, key = closing.popleft()
            day = _ceil_day(closes)
            if next_day is None:
                next_day = day
            while next_day < day:
                evaluate(next_day)
                next_day += DAY_MS
            _opened, race, high, reoffended = trials.pop(key)
            cell = (tpr if reoffended else fpr).setdefault(race, [0, 0])
            cell[0] += high
            cell[1] += 1
        if next_day is not None and through is not None:
            while next_day <= through:
                evaluate(next_day)
                next_day += DAY_MS

    for line in lines:
        try:
            record = orjson.loads(line)
            key, kind, stamp = record["id"], record["event"], record["date"]
            day_ms = midnight.get(stamp[:10])
            if day_ms is None:
                day_ms = midnight[stamp[:10]] = (date.fromisoformat(stamp[:10]).toordinal() - EPOCH_ORDINAL) * DAY_MS
            if len(stamp) != 20 or stamp[10] != "T" or stamp[19] != "Z" or stamp[13] != ":" or stamp[16] != ":":
                raise ValueError(stamp)
            time = day_ms + (int(stamp[11:13]) * 3600 + int(stamp[14:16]) * 60 + int(stamp[17:19])) * 1000
            if type(key) is not str or not key:
                raise ValueError(key)
            if kind == "SCREEN":
                race, score = record["race"], record["decile_score"]
                if type(race) is not str or type(record["sex"]) is not str or type(record["age_cat"]) is not str or type(score) is not int:
                    raise ValueError(record)
            elif kind != "RECIDIVISM":
                raise ValueError(kind)
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            rejected += 1
            continue
        if time < latest:
            rejected += 1  # late
            continue
        if time > latest:
            latest = time
            close_through(_ceil_day(time) - DAY_MS)
        trial = trials.get(key)
        if kind == "SCREEN":
            if trial is None:
                trials[key] = [time, race, score > 6, False]
                closing.append((time + WINDOW_MS, key))
        elif trial is not None and 0 <= time - trial[0] <= WINDOW_MS:
            trial[3] = True
    last_close = _ceil_day(closing[-1][0]) if closing else None
    close_through(None)
    end = max(day for day in (last_close, _ceil_day(latest) - DAY_MS) if day is not None)
    while next_day is not None and next_day <= end:
        evaluate(next_day)
        next_day += DAY_MS
    return gaps, violations, rejected


if __name__ == "__main__":  # the whole-process baseline: this file run as a script imports orjson and the standard library only
    import sys

    with open(sys.argv[1], "rb") as handle:
        found, violated, bad = daily_gaps(handle)
    print(f"{len(found)} days evaluated, {violated} in violation, {bad} rejected")
