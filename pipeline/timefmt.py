"""Event-time helpers: durations like `730d`, instants as integer seconds since the Unix epoch (UTC)."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from typing import Callable

_DURATION = re.compile(r"^\s*(\d+)\s*(w|d|h|m|s)\s*$")
_UNIT_SECONDS = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1}

DAY = 86_400


def parse_duration(text: str | int) -> int:
    """Seconds in a duration written as `<n><unit>` with unit w, d, h, m or s (`730d`, `12h`)."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise ValueError(f"a duration must not be negative; got {text}")
        return text
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(f"a duration is a whole number and a unit (w, d, h, m, s), like 730d or 12h; got {text!r}")
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def format_duration(seconds: int) -> str:
    """The shortest `<n><unit>` spelling of a whole number of seconds."""
    for unit in ("w", "d", "h", "m"):
        if seconds and seconds % _UNIT_SECONDS[unit] == 0:
            return f"{seconds // _UNIT_SECONDS[unit]}{unit}"
    return f"{seconds}s"


def format_instant(seconds: int) -> str:
    """ISO 8601 UTC text of an instant, e.g. `2015-01-02T00:00:00Z`."""
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _from_datetime(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp())


def _iso(value: object) -> int:
    if isinstance(value, str):
        if len(value) == 10:
            day = date.fromisoformat(value)
            return (day.toordinal() - _EPOCH_ORDINAL) * DAY
        return _from_datetime(datetime.fromisoformat(value))
    raise TypeError(f"expected an ISO 8601 date or date-time string; got {type(value).__name__}")


def _epoch(scale: int) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError(f"expected a number of {'milli' if scale > 1 else ''}seconds since the epoch; got {type(value).__name__}")
        return int(float(value)) // scale

    return parse


def _pattern(fmt: str) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if not isinstance(value, str):
            raise TypeError(f"expected a string in the format {fmt!r}; got {type(value).__name__}")
        return _from_datetime(datetime.strptime(value, fmt))

    return parse


_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def time_parser(time_format: str) -> Callable[[object], int]:
    """A function from a raw time value to epoch seconds: `iso`, `epoch_s`, `epoch_ms` or a strptime pattern."""
    if time_format == "iso":
        return _iso
    if time_format == "epoch_s":
        return _epoch(1)
    if time_format == "epoch_ms":
        return _epoch(1000)
    if "%" in time_format:
        return _pattern(time_format)
    raise ValueError(f"time_format must be iso, epoch_s, epoch_ms or a strptime pattern such as %Y-%m-%d; got {time_format!r}")


def floor_to(instant: int, step: int) -> int:
    """The largest multiple of `step` that is at most `instant`."""
    return instant - instant % step


def ceil_to(instant: int, step: int) -> int:
    """The smallest multiple of `step` that is at least `instant`."""
    return -((-instant) // step) * step
