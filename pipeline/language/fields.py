"""What every spec model shares: frozen models that refuse unknown fields, durations, names and field paths."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from fairstream.records.timefmt import format_duration, parse_duration

Duration = Annotated[
    int,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str),
    Field(json_schema_extra={"type": "string", "pattern": r"^\d+(w|d|h|m|s|ms)$"}),
]
"""A span of event time written as `<n><unit>` (`730d`, `12h`, `250ms`), held as milliseconds."""


def parse_cadence(value: object) -> tuple[str, int]:
    """A publishing cadence: `<n> closes` → ("closes", n); a duration (`7d`) → ("time", milliseconds).

    >>> parse_cadence("500 closes"), parse_cadence("1d")
    (('closes', 500), ('time', 86400000))
    """
    if isinstance(value, tuple):
        return value  # type: ignore[return-value]
    text = str(value).strip()
    if text.endswith("closes"):
        count = text[: -len("closes")].strip()
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"a cadence in closes is a whole number of at least 1 and the word closes, like 1000 closes; got {value!r}")
        return ("closes", int(count))
    millis = parse_duration(text)
    if millis <= 0:
        raise ValueError(f"a cadence in event time is a positive duration, like 7d; got {value!r}")
    return ("time", millis)


def format_cadence(cadence: tuple[str, int]) -> str:
    unit, amount = cadence
    return f"{amount} closes" if unit == "closes" else format_duration(amount)


Cadence = Annotated[
    tuple[Literal["time", "closes"], int],
    BeforeValidator(parse_cadence),
    PlainSerializer(format_cadence, return_type=str),
    Field(json_schema_extra={"type": "string", "pattern": r"^(\d+(w|d|h|m|s|ms)|\d+ closes)$"}),
]
"""How often estimate records are written: a span of event time, or a number of closed trials."""

FieldType = Literal["int", "float", "str", "bool", "probabilities"]
"""A field's declared type; `probabilities` is an object of group → probability (a proxy such as BISG), read from CSV
as the columns `<field>_<group>`."""
PROBABILITY_SUM_TOLERANCE = 1e-6
"""How far from 1 a `probabilities` field's values may sum."""
Name = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
FieldPath = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")]
"""A field of a record, or a dotted path into nested JSON objects (`applicant.race`)."""


class SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
