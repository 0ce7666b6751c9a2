"""DataFrames in and out: monitor the rows of a pandas DataFrame as events and get the estimates, alerts and dead
letters back as tidy DataFrames. pandas is optional (`pip install 'fairstream[frames]'`).

What pandas produces is taken as the JSON it stands for: NaN, NaT and None are a missing field (a column with a gap
holds floats), a float with no fraction is an integer, numpy scalars are Python numbers, and a Timestamp is the
event time in the spec's `input.time_format` (ISO 8601 UTC, epoch seconds or milliseconds, or its strptime pattern;
a naive Timestamp is UTC).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fairstream.api import FairnessMonitor
from fairstream.connectors.event_order import time_ordered, time_reader
from fairstream.connectors.files import numbered_rows
from fairstream.records.envelope import ALERT_TYPES, ESTIMATE
from fairstream.verdicts.summary import floor_lines

WARN_SHARE = 0.01
"""Above this share of rejected rows `monitor_frame` warns; when every row is rejected it raises."""

ESTIMATE_COLUMNS = [
    "time", "row", "monitor", "part", "group", "rate", "estimate", "interval_low", "interval_high", "hits", "trials", "below_floor",
    "status", "raw_gap", "raw_ratio",
]  # fmt: skip
"""A group's raw rate (hits / trials, as fairlearn's MetricFrame.by_group) and MAP estimate, its counts and whether it
is below the evidence floor, and its part's gap and ratio of the raw rates (MetricFrame's difference() and ratio() over
the groups judged); `row`: a plain table's rows read (missing for a timed stream)."""
COUNTS = ("row", "hits", "trials")
"""Columns of whole numbers, missing where a cell is suppressed: pandas' nullable integers, not floats."""


@dataclass(frozen=True)
class FrameResult:
    """What `monitor_frame` returns: tidy estimates (one row per evaluation, part and group), alerts, dead letters."""

    estimates: Any
    alerts: Any
    dead_letters: Any


def monitor_frame(frame: Any, *specs: str | Path | Mapping[str, Any], keep_order: bool = False) -> FrameResult:
    """Monitor the rows of `frame` with the specs (paths, bundled names, folders or dicts); the end of the frame is the
    end of the input. The rows are read in event-time order, as `fairstream run` reads a file: a stable sort, rows of
    one time in row order (a spec with `input.sorted` is read as it is). `keep_order=True` feeds them as they are, as a
    stream arrives: a row older than the latest by more than `input.lateness` is then a `late` dead letter. A spec with
    only `monitor` and `metric` reads each row as one closed trial, in row order (see `language.table`). Raises
    `ValueError` when every row is rejected, naming the reasons; warns when more than 1 % are."""
    pandas = _pandas()
    monitor = FairnessMonitor.load(*specs, hold_start=True)
    rows = list(frame_records(frame, monitor.time_field, monitor.time_format))
    if monitor.numbered:
        rows = list(numbered_rows(lambda: rows)())
    elif not keep_order and not monitor.input.sorted:
        rows = [row for _index, row in time_ordered(lambda: rows, time_reader(monitor.input))()]
    records = monitor.feed(rows) + monitor.close()
    letters = [record for record in records if record["type"] == "pipeline.dead_letter"]
    if len(frame) and len(letters) >= len(frame):
        raise ValueError(f"every one of the {len(frame):,} rows was rejected: {_reasons(letters)}")
    if len(frame) and len(letters) > WARN_SHARE * len(frame):
        warnings.warn(f"{len(letters):,} of {len(frame):,} rows were rejected ({_reasons(letters)}); see .dead_letters", stacklevel=2)
    for plan in monitor.plans:
        final = next((record for record in reversed(records) if record["type"] == ESTIMATE and record["monitor"] == plan.spec.monitor), None)
        for line in floor_lines(final, plan.spec.evidence_floor, plan.spec.estimator.min_trials is None) if final else ():
            warnings.warn(f"{plan.spec.monitor}: {line}", stacklevel=2)
    estimates = pandas.DataFrame(list(tidy_estimates(records)), columns=ESTIMATE_COLUMNS)
    estimates["time"] = pandas.to_datetime(estimates["time"], utc=True, format="ISO8601")
    for column in COUNTS:
        values = pandas.to_numeric(estimates[column])
        if (values.dropna() % 1 == 0).all():  # groups given as probabilities count fractions of trials
            estimates[column] = values.astype("Int64")
    return FrameResult(
        estimates=estimates,
        alerts=pandas.DataFrame([record for record in records if record["type"] in ALERT_TYPES]),
        dead_letters=pandas.DataFrame(letters),
    )


def frame_records(frame: Any, time_field: str | None, time_format: str) -> Iterator[dict[str, Any]]:
    """Each row as the JSON record it stands for (see the module's docstring)."""
    columns = list(frame.columns)
    for row in frame.itertuples(index=False, name=None):
        record = {}
        for column, value in zip(columns, row, strict=True):
            plain = json_value(value, time_format if column == time_field else "iso")
            if plain is not None:
                record[str(column)] = plain
        yield record


def json_value(value: Any, time_format: str = "iso") -> Any:
    """A pandas or numpy value as JSON: None for a missing one.

    >>> import numpy, pandas
    >>> json_value(numpy.int64(3)), json_value(4.0), json_value(float("nan")), json_value(pandas.Timestamp("2013-01-27"))
    (3, 4, None, '2013-01-27T00:00:00Z')
    """
    if value is None:
        return None
    if hasattr(value, "to_pydatetime"):  # a pandas Timestamp, or NaT
        if value != value:  # noqa: PLR0124  NaT is not equal to itself
            return None
        return _time_text(value.to_pydatetime(), time_format)
    if isinstance(value, datetime):
        return _time_text(value, time_format)
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # a numpy scalar
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return int(value) if value.is_integer() else value
    return value


def _time_text(moment: datetime, time_format: str) -> str | int | float:
    """A moment in the spec's time format; a naive one is UTC."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    if time_format == "epoch_s":
        seconds = moment.timestamp()
        return int(seconds) if seconds.is_integer() else seconds
    if time_format == "epoch_ms":
        return round(moment.timestamp() * 1000)
    if time_format == "iso":
        text = moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds")
        return text.replace("+00:00", "Z")
    return moment.strftime(time_format)


def tidy_estimates(records: list[dict[str, Any]]) -> Iterator[list[Any]]:
    """One row per estimate record, part and group, in `ESTIMATE_COLUMNS` order."""
    for record in records:
        if record["type"] != ESTIMATE:
            continue
        for part, body in record["parts"].items():
            for group, cell in body["groups"].items():
                low, high = cell.get("interval") or (None, None)
                row = [record["event_time"], record.get("row"), record["monitor"], part, group, cell.get("rate", cell.get("estimate")), cell.get("estimate"), low, high]
                yield [*row, cell.get("hits"), cell.get("trials"), bool(cell.get("below_floor")), body.get("status"), body.get("raw_gap"), body.get("raw_ratio")]


def _reasons(letters: list[dict[str, Any]]) -> str:
    counted = Counter(letter["reason"] for letter in letters)
    return ", ".join(f"{reason}: {count:,}" for reason, count in counted.most_common())


def _pandas() -> Any:
    try:
        import pandas
    except ModuleNotFoundError:
        raise ModuleNotFoundError("monitor_frame needs pandas: pip install 'fairstream[frames]'") from None
    return pandas
