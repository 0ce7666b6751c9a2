"""Small builders shared by the unit tests: a COMPAS-like spec dict and events."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairstream.compiler.load import parse_spec
from fairstream.compiler.plan import Plan, build_plan
from fairstream.records.events import Event
from fairstream.records.timefmt import DAY
from fairstream.trials.bucket import Report

if TYPE_CHECKING:
    import pandas as pd

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
    """A record without what names its monitor and spec: the name, the alert id hashed from it, the hash chain (whose
    writer is the monitor and whose hashes cover the spec's), and when it was written."""
    return {key: value for key, value in record.items() if key not in ("monitor", "alert_id", "emitted_at", "chain")}


def under_any_spec(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records as two equivalent specs write them: without `emitted_at`, and of their chain only the writer and the
    position (its hashes cover the spec file's, which differ between two files meant to give the same records)."""
    return [
        {key: ({"writer": value["writer"], "seq": value["seq"]} if key == "chain" else value) for key, value in record.items() if key != "emitted_at"}
        for record in records
    ]


COMPAS_PROTECTED = ("race", "sex", "age_cat")
"""The fields the bundled COMPAS specs redact from dead letters."""


def dead_letter_shows(payload: str | bytes | dict[str, Any], redact: tuple[str, ...] = COMPAS_PROTECTED) -> Any:
    """What a dead letter keeps of a record, as documented: a JSON object with the redacted fields' values replaced by
    "<redacted>" (compared as a dict), anything else only as the SHA-256 of its bytes."""
    import hashlib
    import json

    record = payload
    if not isinstance(payload, dict):
        try:
            record = json.loads(payload)
        except ValueError:
            record = None
    if not isinstance(record, dict):
        raw = payload if isinstance(payload, bytes) else str(payload).rstrip("\r\n").encode()
        return f"sha256:{hashlib.sha256(raw).hexdigest()}"
    return {name: "<redacted>" if name in redact else value for name, value in record.items()}


def kept(letter_record: str) -> Any:
    """A dead letter's record in the form `dead_letter_shows` gives."""
    import json

    return letter_record if letter_record.startswith("sha256:") else json.loads(letter_record)


def wait_until(condition, what: str, timeout: float = 30.0):
    """The first true value of `condition()` (an OSError counts as not yet); an AssertionError after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = condition()
            if found:
                return found
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


def needs_data(*names: str) -> Any:
    """A mark that skips a test, naming the command that fetches the first of the data sets it needs that is missing."""
    import pytest

    from fairstream.datasets import get_line, locate

    missing = [name for name in names if locate(name) is None]
    return pytest.mark.skipif(bool(missing), reason=get_line(missing[0]) if missing else "every data set is at hand")


def reference_file(name: str) -> Path:
    """A reference data set's file (`../shared/data`, then the cache), or a skip in one line naming the command that fetches it."""
    import pytest

    from fairstream.datasets import get_line, locate

    path = locate(name)
    if path is None:
        pytest.skip(get_line(name))
    return path




def german_decisions(date_of: Callable[[int], str]) -> pd.DataFrame:
    """The real German credit file as one decision per applicant: `id`, `date` (row i dated `date_of(i)`), `sex`, `age`
    and `approved` (class label 1: good credit)."""
    import pandas as pd

    raw = pd.read_csv(reference_file("german"))
    return pd.DataFrame(
        {
            "id": range(len(raw)),
            "date": [date_of(index) for index in range(len(raw))],
            "sex": raw["sex9"],
            "age": raw["Age13"],
            "approved": (raw["classlabel21"] == 1).astype(int),
        }
    )


def binomial_slack(rate: float, runs: int) -> float:
    """Three standard errors of a rate estimated from `runs` runs (for comparing a simulated rate with α)."""
    return 3 * math.sqrt(max(rate * (1 - rate), 1e-12) / runs)
