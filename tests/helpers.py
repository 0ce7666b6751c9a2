"""Small builders shared by the unit tests: a COMPAS-like spec dict and events."""

from __future__ import annotations

import copy
from typing import Any

from fairstream.events import Event
from fairstream.spec.load import parse_spec
from fairstream.spec.plan import Plan, build_plan
from fairstream.timefmt import DAY
from fairstream.trials.bucket import Report

SPEC: dict[str, Any] = {
    "monitor": "unit",
    "input": {
        "time": "date",
        "key": "id",
        "kind": "event",
        "kinds": {"SCREEN": {"race": "str", "score": "int"}, "RECIDIVISM": {}, "DECIDE": {"race": "str", "hired": "bool"}},
    },
    "trial": {"opens_on": ["SCREEN", "DECIDE"], "close_after": "730d", "close_on": ["DECIDE"]},
    "variables": {
        "group": {"first": "SCREEN", "field": "race"},
        "high_risk": {"first": "SCREEN", "expr": "score > 6"},
        "reoffended": {"exists": "RECIDIVISM", "within": "730d"},
    },
    "metric": {"type": "equalized_odds", "group": "group", "prediction": "high_risk", "label": "reoffended", "threshold": 0.1},
    "estimator": {"prior": 0.5, "confidence": 0},
    "evaluate": {"every": "1d"},
    "buckets": 4,
}


def spec_dict(**changes: Any) -> dict[str, Any]:
    """A deep copy of SPEC with top-level sections replaced or (for dicts) updated."""
    spec = copy.deepcopy(SPEC)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(spec.get(key), dict):
            spec[key].update(value)
        else:
            spec[key] = value
    return spec


def plan_of(**changes: Any) -> Plan:
    return build_plan(parse_spec(spec_dict(**changes)))


def screen(key: str, day: int, race: str = "a", score: int = 8) -> Event:
    return Event(key, day * DAY, "SCREEN", {"id": key, "race": race, "score": score})


def recid(key: str, day: int) -> Event:
    return Event(key, day * DAY, "RECIDIVISM", {"id": key})


def only(reports: list[Report]) -> Report | None:
    """The report of a bucket with one recipient, None when no tick became final."""
    assert len(reports) <= 1
    return reports[0] if reports else None


def anonymous(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what names its monitor: the name, the alert id hashed from it, and when it was written."""
    return {key: value for key, value in record.items() if key not in ("monitor", "alert_id", "emitted_at")}
