"""The ProPublica COMPAS CSV as a time-ordered event stream: a SCREEN event per defendant and a RECIDIVISM event per re-offence."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fairstream.records.csvrows import CsvTable
from fairstream.records.errors import InputError
from fairstream.records.events import Unreadable

SCREEN_FIELDS = ("race", "sex", "age_cat")
"""Text columns copied onto each SCREEN event, next to the integer `decile_score`."""

_REQUIRED = ("id", "compas_screening_date", "decile_score", "is_recid", "r_offense_date", *SCREEN_FIELDS)
_KIND_ORDER = {"SCREEN": 0, "RECIDIVISM": 1}


def compas_events(path: str | Path) -> list[dict[str, Any] | Unreadable]:
    """Events of the unchanged ProPublica file, ordered by (date, kind, id) so a replay is deterministic.

    A row whose score is not an integer still yields its SCREEN event with the text as found, so the
    pipeline's validation dead-letters it with the reason instead of the mapping dropping it; a row that cannot be
    read at all (see `records.csvrows`) comes first, in file order, as the `Unreadable` the parser dead-letters.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"COMPAS file not found: {path}; it is compas-scores-two-years.csv from github.com/propublica/compas-analysis")
    with path.open("rb") as handle:
        table = CsvTable(handle, source=path)
        missing = [column for column in _REQUIRED if column not in table.header]
        if missing:
            raise InputError(f"{path} is not the ProPublica COMPAS file: missing columns {', '.join(missing)}")
        events: list[dict[str, Any]] = []
        unreadable: list[Unreadable] = []
        for row in table:
            if isinstance(row, Unreadable):
                unreadable.append(row)
                continue
            score = row["decile_score"]
            screen = {
                "event": "SCREEN",
                "id": row["id"],
                "date": row["compas_screening_date"],
                "decile_score": int(score) if score.strip().lstrip("-").isdigit() else score,
                **{name: row[name] for name in SCREEN_FIELDS},
            }
            events.append(screen)
            if row["is_recid"] == "1" and row["r_offense_date"]:
                events.append({"event": "RECIDIVISM", "id": row["id"], "date": row["r_offense_date"]})
    events.sort(key=lambda e: (e["date"], _KIND_ORDER[e["event"]], int(e["id"]) if e["id"].isdigit() else 0, e["id"]))
    return [*unreadable, *events]


def compas_records(path: str | Path) -> Callable[[], list[dict[str, Any] | Unreadable]]:
    """A record factory for `RecordSource`: reads the file once and hands out fresh copies of the events."""
    events = compas_events(path)
    return lambda: [dict(event) if isinstance(event, dict) else event for event in events]
