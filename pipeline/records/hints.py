"""What fixes a rejected record: the time format its event time is written in, the field names near a missing one, and
the spec field or option behind each dead-letter reason, so a mass rejection is explained where it is reported (pure)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from fairstream.records.timefmt import time_parser

TIME_FORMATS = (
    "%m/%d/%Y",
    "%d/%m/%Y",
    "%d.%m.%Y",
    "%Y/%m/%d",
    "%Y%m%d",
    "%m/%d/%Y %H:%M",
    "%m/%d/%Y %H:%M:%S",
    "%d/%m/%Y %H:%M",
    "%d/%m/%Y %H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
    "%Y/%m/%d %H:%M:%S",
    "%d %b %Y",
    "%b %d %Y",
    "%d-%b-%Y",
)
"""Patterns tried on an event time the spec's format cannot read, US month/day first (where both read, it is a guess)."""

FIXES = {
    "not_json": "--format (a CSV file is read as JSON lines?)",
    "not_csv": "--format, or the file's quoting (a quote left open?)",
    "bad_encoding": "the file's encoding (fairstream reads UTF-8)",
    "not_object": "--format",
    "missing_field": "input.time, input.key, input.kind or input.kinds",
    "bad_time": "input.time_format",
    "wrong_type": "the field's type in input.kinds",
    "bad_probabilities": "the proxy that wrote the field (its probabilities must be at least 0 and sum to 1)",
    "unknown_kind": "input.kinds (or input.kind, the field that names the kind)",
    "late": "input.lateness",
    "future": "input.max_future or input.max_ahead",
    "overtaken": "shield.answer_within",
    "too_old": "input.max_gap",
    "key_too_long": "input.max_key_chars, or input.key",
    "value_too_long": "input.max_value_chars",
    "record_too_large": "input.max_record_bytes",
    "not_finite": "nothing in the spec: the producer writes NaN or Infinity, which JSON has not (null, or the field left out)",
    "null_field": "nothing in the spec: the producer leaves a declared field null",
    "wrong_partition": "input.partitioner, or input.keyed: false",
    "internal": "nothing in the spec: please report it",
}
"""The spec field (or option) that decides each reason a record is dead-lettered for."""

_SHAPE = re.compile(r"\d")


def time_format_of(value: object) -> str | None:
    """A `time_format` that reads `value`, or None.

    >>> time_format_of("01/31/2024"), time_format_of("2024-01-31T10:00:00Z"), time_format_of("1706695200")
    ("'%m/%d/%Y'", 'iso', 'epoch_s')
    """
    text = str(value).strip()
    if re.fullmatch(r"\d{9,11}(\.\d+)?", text):
        return "epoch_s"
    if re.fullmatch(r"\d{12,14}", text):
        return "epoch_ms"
    for name, spelled in (("iso", "iso"), *((pattern, repr(pattern)) for pattern in TIME_FORMATS)):
        try:
            time_parser(name)(text)
        except (TypeError, ValueError, OverflowError):
            continue
        return spelled
    return None


class TimeFormatGuess:
    """`time_format_of`, remembered per shape of the value (its digits masked), so a flood of one spelling costs one guess."""

    def __init__(self, limit: int = 256):
        self.limit = limit
        self.known: dict[str, str | None] = {}

    def __call__(self, value: object) -> str | None:
        shape = _SHAPE.sub("9", str(value))
        if shape not in self.known:
            guess = time_format_of(value)
            if len(self.known) >= self.limit:
                return guess
            self.known[shape] = guess
        return self.known[shape]


def near_fields(name: str, fields: Iterable[str], limit: int = 3) -> list[str]:
    """The record's field names closest to a missing `name` (a case-insensitive match first).

    >>> near_fields("sex", ["Sex9", "id", "date"])
    ['Sex9']
    """
    fields = [field for field in fields if isinstance(field, str)]
    folded = [field for field in fields if field.lower() == name.lower()]
    close = difflib.get_close_matches(name.lower(), [field.lower() for field in fields], n=limit, cutoff=0.5)
    by_lower = {field.lower(): field for field in fields}
    return list(dict.fromkeys([*folded, *(by_lower[match] for match in close)]))[:limit]
