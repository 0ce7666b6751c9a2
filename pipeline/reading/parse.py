"""Validate raw records against a spec's input schema; a bad record becomes a `DeadLetter` with its reason."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from fairstream.language.fields import PROBABILITY_SUM_TOLERANCE, FieldType
from fairstream.language.stream import InputSchema
from fairstream.records.events import DeadLetter, Event, RawRecord, Unreadable
from fairstream.records.hints import TimeFormatGuess, near_fields
from fairstream.records.redact import DEFAULT, LetterRecord
from fairstream.records.timefmt import format_instant, representable, time_parser

REASONS = (
    "not_json", "not_csv", "bad_encoding", "not_object", "missing_field", "bad_time", "wrong_type", "bad_probabilities", "unknown_kind", "late", "future", "overtaken",
    "key_too_long", "value_too_long", "record_too_large", "not_finite", "null_field", "wrong_partition", "internal",
)  # fmt: skip
"""Every reason a record can be dead-lettered for."""

class _AlwaysChecked:
    """No value is of this type: a `probabilities` field is checked every time."""


_EXACT = {"int": int, "float": float, "str": str, "bool": bool, "probabilities": _AlwaysChecked}
"""The Python type a field of each declared type usually arrives as, needing no conversion."""

_TRUE = {"true", "True", "TRUE", "1"}
_FALSE = {"false", "False", "FALSE", "0"}


ParsedBatch = tuple[list[Event], list[DeadLetter], list[RawRecord]]
"""A parsed source batch: its events and dead letters, and its markers (records with negative offsets), each in order."""


def split_parsed(parse: Callable[[RawRecord], Event | DeadLetter], raws: list[RawRecord]) -> ParsedBatch:
    """Parse each record of a batch but its markers, and sort what comes out by type."""
    events: list[Event] = []
    dead: list[DeadLetter] = []
    markers: list[RawRecord] = []
    keep_event, keep_letter = events.append, dead.append
    for raw in raws:
        if raw.offset < 0:
            markers.append(raw)
            continue
        item = parse(raw)
        if type(item) is Event:
            keep_event(item)
        else:
            keep_letter(item)
    return events, dead, markers


class _BadRecord(Exception):
    def __init__(self, reason: str, detail: str):
        self.reason = reason
        self.detail = detail


def _checker(name: str, kind: FieldType, strings: bool, redacted: bool = False) -> Callable[[Any], Any]:
    """A function that returns the field's value in its declared type or raises `_BadRecord` (whose detail names only
    the type of a `redacted` field's value, as the dead letter's record hides the value)."""
    shown = _type_only if redacted else _excerpt

    def wrong(value: Any) -> _BadRecord:
        return _BadRecord("wrong_type", f"field {name!r} must be {kind}; got {shown(value)}")

    def as_int(value: Any) -> int:
        if type(value) is int:
            return value
        if strings and isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        raise wrong(value)

    def as_float(value: Any) -> float:
        if type(value) in (int, float):
            return value
        if strings and isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise wrong(value)

    def as_str(value: Any) -> str:
        if type(value) is str:
            return value
        raise wrong(value)

    def as_bool(value: Any) -> bool:
        if type(value) is bool:
            return value
        if strings and value in _TRUE:
            return True
        if strings and value in _FALSE:
            return False
        raise wrong(value)

    def as_probabilities(value: Any) -> dict[str, float]:
        return probabilities(name, value, strings, shown)

    return {"int": as_int, "float": as_float, "str": as_str, "bool": as_bool, "probabilities": as_probabilities}[kind]


def probabilities(name: str, value: Any, strings: bool, shown: Callable[[Any], str]) -> dict[str, float]:
    """A `probabilities` field checked: an object of group → probability, each at least 0, summing to 1 (text numbers
    read from CSV columns); `shown` writes a value into a detail."""
    if not isinstance(value, dict) or not value:
        raise _BadRecord("wrong_type", f"field {name!r} must be an object of group → probability; got {shown(value)}")
    checked: dict[str, float] = {}
    for group, probability in value.items():
        if strings and isinstance(probability, str):
            try:
                probability = float(probability)
            except ValueError:
                pass
        if isinstance(probability, bool) or not isinstance(probability, int | float) or not math.isfinite(probability):
            raise _BadRecord("wrong_type", f"field {name!r}: the probability of {group!r} must be a number; got {shown(probability)}")
        if probability < 0:
            value_shown = "" if shown is _type_only else f" ({probability:g})"
            raise _BadRecord("bad_probabilities", f"field {name!r}: the probability of {group!r} is negative{value_shown}")
        checked[str(group)] = float(probability)
    total = math.fsum(checked.values())
    if abs(total - 1) > PROBABILITY_SUM_TOLERANCE:
        total_shown = "" if shown is _type_only else f" (they sum to {total:.9g})"
        raise _BadRecord("bad_probabilities", f"field {name!r}: the probabilities do not sum to 1 within {PROBABILITY_SUM_TOLERANCE:g}{total_shown}")
    return checked


def column_group(prefix: str) -> Callable[[dict[str, Any]], Any]:
    """Reads a `probabilities` field from CSV columns `<prefix>_<group>`: None where the row has none of them."""
    start = f"{prefix}_"

    def gather(record: dict[str, Any]) -> Any:
        found = {column[len(start) :]: value for column, value in record.items() if column.startswith(start) and value not in (None, "")}
        return found or record.get(prefix)

    return gather


def _reader(name: str, kind: FieldType, strings: bool) -> tuple[Callable[[dict[str, Any]], Any], bool]:
    """How a declared field is read, and whether through the getter (a dotted path; CSV columns of a probabilities field)."""
    if kind == "probabilities" and strings:
        return column_group(name), True
    return field_getter(name), "." in name


def field_getter(path: str) -> Callable[[dict[str, Any]], Any]:
    """Reads a field, or walks a dotted path through nested objects (None where a step is missing or not an object)."""
    if "." not in path:
        return lambda record: record.get(path)
    steps = path.split(".")

    def walk(record: dict[str, Any]) -> Any:
        value: Any = record
        for step in steps:
            if not isinstance(value, dict):
                return None
            value = value.get(step)
        return value

    return walk


def key_getter(key: str | Sequence[str]) -> Callable[[dict[str, Any]], Any]:
    """The dependence key of a record: one field (or dotted path) as it is, or several joined as a JSON array
    (`["A17","north"]`: readable, and no two different tuples give one text), None when a part is missing, empty, or
    not a string or an integer."""
    if isinstance(key, str):
        return field_getter(key)
    getters = tuple(field_getter(part) for part in key)

    def composite(record: dict[str, Any]) -> str | None:
        parts = []
        for get in getters:
            value = get(record)
            if value is None or value == "" or isinstance(value, bool) or not isinstance(value, str | int):
                return None
            parts.append(value)
        return orjson.dumps(parts).decode()

    return composite


def key_name(key: str | Sequence[str]) -> str:
    """How messages name the key: the field, or the fields of a composite key in brackets."""
    return key if isinstance(key, str) else f"[{', '.join(key)}]"


class RecordParser:
    """Turns raw payloads (JSON text, or dicts from CSV rows) into `Event`s; `strings=True` converts text values to the declared types."""

    def __init__(self, schema: InputSchema, *, strings: bool = False, letter_record: LetterRecord = DEFAULT):
        self._letter_record = letter_record
        self._time_field, self._time = schema.time, field_getter(schema.time)
        self._key_field, self._key = key_name(schema.key), key_getter(schema.key)
        self._max_key = schema.max_key_chars
        self._max_value = schema.max_value_chars
        self._max_record = schema.max_record_bytes
        self._kind_field = schema.kind
        self._kind = field_getter(schema.kind) if schema.kind is not None else None
        self._only_kind = next(iter(schema.kinds)) if schema.kind is None else None
        self._parse_time = time_parser(schema.time_format)
        self._guess_format = TimeFormatGuess()
        self._strings = strings
        self._kinds = {
            kind: tuple((name, *_reader(name, ftype, strings), _checker(name, ftype, strings, letter_record.redacts(name)), _EXACT[ftype]) for name, ftype in fields.items())
            for kind, fields in schema.kinds.items()
        }
        self._plain_key = isinstance(schema.key, str) and "." not in schema.key
        self._composite = not isinstance(schema.key, str)
        self._plain_time = "." not in schema.time
        self._plain_kind = schema.kind is not None and "." not in schema.kind
        self._nested = any("." in name for fields in schema.kinds.values() for name in fields)

    def parse_batch(self, raws: list[RawRecord]) -> ParsedBatch:
        """A source batch of one partition, in order: its events, its dead letters, and its markers (`IDLE`, `ENDED`)."""
        return split_parsed(self.parse, raws)

    def parse(self, raw: RawRecord) -> Event | DeadLetter:
        payload = raw.payload
        try:
            if isinstance(payload, dict):
                self._check_size(sum(len(value) for value in payload.values() if type(value) is str))
                record = dict(payload) if self._strings or self._nested else payload  # converted in place: keep the row as it came
            elif type(payload) is Unreadable:
                return DeadLetter(payload.reason, payload.detail, self._letter_record(payload.text), raw.partition, raw.offset, topic=raw.topic)
            else:
                self._check_size(len(payload))
                try:
                    record = orjson.loads(payload)
                except orjson.JSONDecodeError as err:
                    raise _not_json(payload, err) from None
                if not isinstance(record, dict):
                    raise _BadRecord("not_object", f"expected a JSON object; got {type(record).__name__}")
            return self._event(record, raw)
        except _BadRecord as bad:
            return DeadLetter(bad.reason, bad.detail, self._letter_record(payload), raw.partition, raw.offset, topic=raw.topic)
        except Exception as err:  # nothing a record holds may stop the pipeline: what no check foresaw is a dead letter too
            return DeadLetter("internal", _excerpt(f"{type(err).__name__}: {err}", 500), self._letter_record(payload), raw.partition, raw.offset, topic=raw.topic)

    def _check_size(self, size: int) -> None:
        if size > self._max_record:
            raise _BadRecord("record_too_large", f"the record has {size:,} bytes; at most input.max_record_bytes = {self._max_record:,}")

    def _event(self, record: dict[str, Any], raw: RawRecord) -> Event:
        key = record.get(self._key_field) if self._plain_key else self._key(record)
        if key is None or key == "":
            _refuse_null(self._key_field, key, record, "dependence key")
            if self._composite:
                raise _BadRecord("missing_field", f"dependence key {self._key_field}: a part is missing, empty, or not a string or an integer")
            raise _BadRecord("missing_field", f"missing dependence key {self._key_field!r}{_near(self._key_field, record)}")
        if type(key) is not str:
            if isinstance(key, bool) or not isinstance(key, int):
                raise _BadRecord("wrong_type", f"key {self._key_field!r} must be a string or an integer; got {_excerpt(key)}")
            key = str(key)
        if len(key) > self._max_key:
            raise _BadRecord("key_too_long", f"key {self._key_field!r} has {len(key):,} characters; at most input.max_key_chars = {self._max_key:,}")
        kind = record.get(self._kind_field) if self._plain_kind else self._only_kind if self._kind is None else self._kind(record)
        if kind is None or kind == "":
            _refuse_null(self._kind_field, kind, record, "event kind")
            raise _BadRecord("missing_field", f"missing event kind {self._kind_field!r}{_near(self._kind_field, record)}")
        if type(kind) is not str:
            raise _BadRecord("wrong_type", f"event kind {self._kind_field!r} must be a string; got {_excerpt(kind)}")
        checks = self._kinds.get(kind)
        if checks is None:
            raise _BadRecord("unknown_kind", f"unknown event kind {_excerpt(kind)}; known kinds: {', '.join(sorted(self._kinds))}")
        stamp = record.get(self._time_field) if self._plain_time else self._time(record)
        if stamp is None or stamp == "":
            _refuse_null(self._time_field, stamp, record, "event time")
            raise _BadRecord("missing_field", f"missing event time {self._time_field!r}{_near(self._time_field, record)}")
        try:
            time = self._parse_time(stamp)
        except (TypeError, ValueError, OverflowError) as err:
            guess = self._guess_format(stamp)
            reads = f"; input.time_format: {guess} reads it" if guess is not None else ""
            raise _BadRecord("bad_time", f"cannot read event time {_excerpt(stamp)}: {err}{reads}") from None
        if not representable(time):
            raise _BadRecord("bad_time", f"event time {_excerpt(stamp)} is {format_instant(time)}, outside the years 1 to 9999 (UTC)")
        for name, get, nested, check, exact in checks:
            value = get(record) if nested else record.get(name)
            if type(value) is exact and value != "" and not nested:  # the usual case: already of the declared type, kept as it is
                if exact is str and len(value) > self._max_value:
                    raise self._too_long(name, value)
                continue
            if value is None or value == "":
                _refuse_null(name, value, record, "field")
                raise _BadRecord("missing_field", f"{kind} events need field {name!r}{_near(name, record) if value is None else ''}")
            checked = check(value)
            if type(checked) is str and len(checked) > self._max_value:
                raise self._too_long(name, checked)
            if checked is not value or nested:  # a nested value is kept under its dotted path, where variables read it
                record[name] = checked
        return Event(key, time, kind, record, raw)


    def _too_long(self, name: str, value: str) -> _BadRecord:
        return _BadRecord("value_too_long", f"field {name!r} has {len(value):,} characters; at most input.max_value_chars = {self._max_value:,}")


def _not_json(payload: Any, err: orjson.JSONDecodeError) -> _BadRecord:
    """Why a payload is not JSON: empty, a number JSON cannot write (NaN, Infinity) in a named field, or the parser's
    own words."""
    if not payload or not payload.strip():
        return _BadRecord("not_json", "an empty record")
    text = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else str(payload)
    if any(token in text for token in ("NaN", "Infinity")):
        try:
            lenient = json.loads(text)
        except (ValueError, RecursionError):
            lenient = None
        where = _non_finite(lenient)
        if where is not None:
            path, value = where
            return _BadRecord("not_finite", f"field {path!r} is {value}: JSON has no NaN or Infinity (write null, or leave the field out)")
    return _BadRecord("not_json", str(err))


def _non_finite(value: Any, path: str = "") -> tuple[str, float] | None:
    """The dotted path and value of the first NaN or infinite number in a decoded record, if any."""
    if isinstance(value, float) and not math.isfinite(value):
        return path or "(the record)", value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for name, item in items:
        found = _non_finite(item, f"{path}.{name}" if path else str(name))
        if found is not None:
            return found
    return None


def _refuse_null(name: str, value: Any, record: dict[str, Any], what: str) -> None:
    """A field that is there but null is `null_field`, not missing: the record names it, its value is what is wrong."""
    if value is not None:
        return
    holder: Any = record
    for step in name.split(".")[:-1]:
        holder = holder.get(step) if isinstance(holder, dict) else None
    if isinstance(holder, dict) and name.split(".")[-1] in holder:
        raise _BadRecord("null_field", f"{what} {name!r} is null; it needs a value")


def _near(name: str, record: dict[str, Any]) -> str:
    """Where a field is missing: the field names near it (a misspelt column, a different case) in the object the
    missing step of its path should be in, if any."""
    holder: Any = record
    steps = name.split(".")
    for step in steps[:-1]:
        if not isinstance(holder, dict) or step not in holder:
            break
        holder = holder[step]
    else:
        step = steps[-1]
    near = near_fields(step, holder) if isinstance(holder, dict) else []
    return f"; the record has {', '.join(map(repr, near))}" if near else ""


def _type_only(value: Any) -> str:
    """How a detail names a redacted field's value: by its type alone."""
    return f"a {type(value).__name__} (value redacted)"


def _excerpt(value: Any, limit: int = 80) -> str:
    """A value's repr for a dead letter's detail, cut to `limit` characters (the record itself is kept beside it)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"
