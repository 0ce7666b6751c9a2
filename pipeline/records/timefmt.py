"""Event-time helpers: durations like `730d` or `250ms`, instants as integer milliseconds since the Unix epoch (UTC)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import lru_cache

_DURATION = re.compile(r"^\s*(\d+)\s*(w|d|h|ms|m|s)\s*$")
_UNIT_MS = {"w": 604_800_000, "d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1_000, "ms": 1}

SECOND = 1_000
HOUR = 3_600_000
DAY = 86_400_000
"""Milliseconds in a second, an hour and a day."""


MIN_TIME = -62_135_596_800_000
MAX_TIME = 253_402_300_799_999
"""The first and last millisecond an event time may have: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z."""

LONGEST = MAX_TIME - MIN_TIME
"""The longest duration: from the first representable instant to the last."""


def parse_duration(text: str | int) -> int:
    """Milliseconds in a duration written as `<n><unit>` with unit w, d, h, m, s or ms (`730d`, `12h`, `250ms`).

    >>> parse_duration("730d") == 730 * DAY
    True
    """
    if isinstance(text, int) and not isinstance(text, bool):
        if not 0 <= text <= LONGEST:
            raise ValueError(f"a duration is between 0 and {LONGEST} milliseconds; got {text}")
        return text
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(f"a duration is a whole number and a unit (w, d, h, m, s, ms), like 730d or 12h; got {text!r}")
    millis = int(match.group(1)) * _UNIT_MS[match.group(2)]
    if millis > LONGEST:
        raise ValueError(f"a duration can be at most {LONGEST // DAY}d, the span of representable event times; got {text!r}")
    return millis


def format_duration(millis: int) -> str:
    """The shortest `<n><unit>` spelling of a whole number of milliseconds.

    >>> format_duration(730 * DAY), format_duration(1500)
    ('730d', '1500ms')
    """
    for unit in ("w", "d", "h", "m", "s"):
        if millis and millis % _UNIT_MS[unit] == 0:
            return f"{millis // _UNIT_MS[unit]}{unit}"
    return f"{millis}ms"


def representable(millis: int) -> bool:
    """Whether an instant lies in the years 1 to 9999 (UTC), where it can be written as a date."""
    return MIN_TIME <= millis <= MAX_TIME


@lru_cache(maxsize=4096)
def format_instant(millis: int) -> str:
    """ISO 8601 UTC text of an instant, with milliseconds only when it has them (outside the years 1–9999, milliseconds since the epoch).

    >>> format_instant(DAY), format_instant(DAY + 1), format_instant(MIN_TIME), format_instant(MIN_TIME - 1)
    ('1970-01-02T00:00:00Z', '1970-01-02T00:00:00.001Z', '0001-01-01T00:00:00Z', '-62135596800001ms after 1970-01-01T00:00:00Z')
    """
    if not representable(millis):
        return f"{millis}ms after 1970-01-01T00:00:00Z"
    moment = datetime.fromtimestamp(millis // 1000, tz=UTC).isoformat()[:19]  # four-digit years, unlike strftime's %Y
    return f"{moment}.{millis % 1000:03d}Z" if millis % 1000 else f"{moment}Z"


def _from_datetime(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    since = moment - _EPOCH
    return since.days * DAY + since.seconds * SECOND + since.microseconds // 1000


def _iso(value: object) -> int:
    if isinstance(value, str):
        if len(value) == 10:
            day = date.fromisoformat(value)
            return (day.toordinal() - _EPOCH_ORDINAL) * DAY
        return _from_datetime(datetime.fromisoformat(value))
    raise TypeError(f"expected an ISO 8601 date or date-time string; got {type(value).__name__}")


def _epoch(to_millis: int) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            unit = "seconds" if to_millis > 1 else "milliseconds"
            raise TypeError(f"expected a number of {unit} since the epoch; got {type(value).__name__}")
        return int(float(value) * to_millis)

    return parse


def _pattern(fmt: str) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if not isinstance(value, str):
            raise TypeError(f"expected a string in the format {fmt!r}; got {type(value).__name__}")
        return _from_datetime(datetime.strptime(value, fmt))

    return parse


try:
    from fairstream.records.isotime import IsoTime  # the common UTC spellings in C, the rest handed back to `_iso`
except ImportError:  # installed without a C compiler
    IsoTime = None

_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def time_parser(time_format: str) -> Callable[[object], int]:
    """A function from a raw time value to epoch milliseconds: `iso`, `epoch_s`, `epoch_ms` or a strptime pattern.

    >>> time_parser("iso")("2013-08-14T00:00:01.5+00:00") - time_parser("iso")("2013-08-14")
    1500
    """
    if time_format == "iso":
        return _iso if IsoTime is None else IsoTime(_iso)
    if time_format == "epoch_s":
        return _epoch(SECOND)
    if time_format == "epoch_ms":
        return _epoch(1)
    if "%" in time_format:
        return _pattern(time_format)
    raise ValueError(f"time_format must be iso, epoch_s, epoch_ms or a strptime pattern such as %Y-%m-%d; got {time_format!r}")


def ceil_to(instant: int, step: int) -> int:
    """The smallest multiple of `step` that is at least `instant`."""
    return -((-instant) // step) * step
