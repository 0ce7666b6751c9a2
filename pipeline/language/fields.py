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
