"""Arrival orders within a lateness bound: each event delayed by a random part of the bound, and the time-ordered
stream they must all monitor alike."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

from fairstream.records.timefmt import time_parser

LATENESS_DAYS = 3
KIND_ORDER = {"SCREEN": 0, "RECIDIVISM": 1}
"""The order of the kinds in the COMPAS spec's input.kinds: events of equal time fold in it."""

_DAY_MS = 86_400_000
_parse = time_parser("iso")


def event_time(event: dict[str, Any]) -> int:
    return _parse(event["date"])


def time_ordered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stream every arrival order within the lateness must monitor as: by event time, then by kind as declared."""
    return sorted(events, key=lambda event: (event_time(event), KIND_ORDER[event["event"]]))


def within_lateness(events: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """An arrival order in which no event comes after one more than the lateness later than itself: each event is
    delayed by a uniform share of the bound, then the stream is ordered by arrival."""
    rng = random.Random(seed)
    return [event for _, event in sorted(((event_time(event) + rng.random() * LATENESS_DAYS * _DAY_MS, event) for event in events), key=lambda pair: pair[0])]


def spec_with_lateness(specs_dir: Path, folder: Path) -> Path:
    spec = yaml.safe_load((specs_dir / "compas_equalized_odds.yaml").read_text())
    spec["input"]["lateness"] = f"{LATENESS_DAYS}d"
    assert list(spec["input"]["kinds"]) == list(KIND_ORDER)
    path = folder / "lateness.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path
