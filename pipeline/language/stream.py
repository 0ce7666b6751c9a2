"""The stream a spec reads and how it becomes trials: the input schema, the trial lifecycle, per-trial variables and aggregates."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from fairstream.language.fields import Duration, FieldPath, FieldType, Name, SpecModel
from fairstream.records.timefmt import DAY, HOUR


class InputSchema(SpecModel):
    """Which fields of a record carry the event time, the dependence key and the event kind."""

    time: FieldPath = Field(description="field holding the event time (a dotted path reaches into nested objects: meta.time)")
    time_format: str = Field("iso", description="iso, epoch_s, epoch_ms, or a strptime pattern such as %Y-%m-%d")
    key: FieldPath | list[FieldPath] = Field(
        description="field holding the dependence key: events with one key form one trial; a list of fields is a composite "
        "key (`[applicant_id, branch]`: one trial per applicant and branch)"
    )
    max_key_chars: int = Field(256, ge=1, description="a longer dependence key is a dead letter (key_too_long): every open trial holds its key")
    max_value_chars: int = Field(
        256, ge=1, description="a longer string in a declared field is a dead letter (value_too_long): a group name is in every record that counts it"
    )
    max_record_bytes: int = Field(
        262_144,
        ge=1,
        description="a longer record (its JSON text; a CSV row's text values together) is a dead letter (record_too_large): "
        "a shield writes each decision record back whole, and Kafka refuses messages over 1 MB by default",
    )
    kind: FieldPath | None = Field(None, description="field holding the event kind; omit it when every record is of the one kind in kinds")
    kinds: dict[str, dict[FieldPath, FieldType]] = Field(
        description="per event kind, the fields (or dotted paths) it must carry and their types", min_length=1
    )
    columns: list[str] | None = Field(None, description="a CSV input without a header line: its column names, in order")
    lateness: Duration = Field(0, description="how far event time may run backwards before an event is late (on a stream; a file is read in event-time order)")
    numbered: bool = Field(
        False, description="set by a table spec (no input section): the source numbers each row in _row, the row's key and time"
    )
    sorted: bool = Field(
        False, description="an input file is in event-time order already: read it as it is, without sorting it first (a later row older than the lateness is then late)"
    )
    max_future: Duration | None = Field(
        HOUR, description="an event dated more than this after the wall clock is a dead letter (future); null: no limit"
    )
    max_ahead: Duration | None = Field(
        None, description="an event dated more than this after its partition's latest event time is a dead letter (future); null: no limit"
    )
    max_gap: Duration | None = Field(
        365 * DAY,
        description="among a partition's first 100 events, the few (at most a tenth) dated before a silence longer than this "
        "ahead of most of them are dead letters (too_old): one event dated decades ahead of the stream cannot start its clock; null: no limit",
    )
    topics: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]{1,249}$")]] | None = Field(
        None,
        min_length=1,
        description="the Kafka topics of the events (--topic overrides); several must be co-partitioned by the dependence key "
        "(equal partition counts, this partitioner) and are read as one stream, merged in event time",
    )
    keyed: bool = Field(
        True,
        description="every event of a dependence key is in one input partition (a topic keyed by it, files split by it): trials "
        "are kept where their partition is read and only per-tick counts travel; false: events are re-keyed into the trial buckets",
    )
    partitioner: Literal["murmur2", "crc32", "none"] = Field(
        "murmur2",
        description="with keyed input, how keys were placed on partitions, checked on every event (an event elsewhere is a "
        "wrong_partition dead letter): murmur2 (Kafka's Java client, fairstream replay and split), crc32 (librdkafka's "
        "default), none (not checked)",
    )

    @model_validator(mode="after")
    def _a_composite_key_names_distinct_fields(self) -> InputSchema:
        if isinstance(self.key, list) and (not self.key or len(set(self.key)) != len(self.key)):
            raise ValueError(f"a composite key names one or more distinct fields; got {self.key}")
        return self

    @model_validator(mode="after")
    def _one_kind_without_a_kind_field(self) -> InputSchema:
        if self.kind is None and len(self.kinds) != 1:
            raise ValueError(f"without a kind field every record is of one kind, so kinds must name exactly one; got {', '.join(self.kinds)}")
        return self


class TrialSpec(SpecModel):
    """When a trial (the events of one dependence key) opens and closes."""

    opens_on: list[str] | None = Field(None, description="kinds that may open a trial; other kinds only join open trials")
    opens_when: str | None = Field(
        None, description="only an event satisfying this expression opens a trial (over its fields and `kind`: \"kind == 'APPLY' and amount > 0\")"
    )
    close_after: Duration | None = Field(None, description="close this long after the trial opened (event time)")
    close_on: list[str] | None = Field(None, description="close when an event of one of these kinds arrives")
    closes_when: str | None = Field(
        None, description="close when an event satisfying this expression arrives (over its fields and `kind`: \"kind == 'DECISION' and final\")"
    )
    max_open: int = Field(
        10_000_000,
        ge=1,
        description="open trials kept at most (split evenly over the input partitions, or the buckets of input that is not keyed); beyond it the trials already open are kept "
        "and new ones are not, counted as evicted, their outcomes not counted",
    )

    @model_validator(mode="after")
    def _closes_somehow(self) -> TrialSpec:
        if self.close_after is None and not self.close_on and self.closes_when is None:
            raise ValueError("a trial needs close_after, close_on or closes_when")
        return self


FOLDS = ("count", "sum", "max", "min")
"""Variables that fold every event of a kind in the trial: how many, their total, their largest or smallest value."""


class BisgFields(SpecModel):
    """The fields Bayesian Improved Surname Geocoding reads: a surname and a ZIP code (neither appears in any output)."""

    surname: FieldPath = Field(description="the field holding the surname")
    zip: FieldPath = Field(description="the field holding the ZIP code (five digits; a ZIP+4 is cut)")


class Variable(SpecModel):
    """A per-trial value: a field or expression of the first/last event of a kind, an existence test, a count, sum, max or
    min over a kind's events, or an expression over other variables."""

    first: str | None = Field(None, description="take the value from the first event of this kind")
    last: str | None = Field(None, description="take the value from the last event of this kind")
    field: str | None = Field(None, description="with first/last/sum/max/min: the field to take")
    expr: str | None = Field(None, description="with first/last/sum/max/min: an expression over that event's fields; alone: over other variables")
    bisg: BisgFields | None = Field(
        None,
        description="with first/last: the group probabilities (white, black, api, native, multiple, hispanic) BISG gives the "
        "event's surname and ZIP code (pip install 'fairstream[bisg]')",
    )
    truth: Name | None = Field(
        None,
        description="with first/last and probabilities (a field or bisg): a field of the same event holding the self-reported "
        "group on the records that have it (absent, null or empty on the others; leave it out of the kind's declared fields); "
        "the run tests the probabilities' calibration on those records and, where it fails, publishes estimates recalibrated on them",
    )
    elapsed: Literal["s", "m", "h", "d", "w"] | None = Field(
        None, description="with first/last: instead of a field, the time from the trial's opening to that event, in this unit (d: days)"
    )
    exists: str | None = Field(None, description="true when an event of this kind belongs to the trial")
    count: str | None = Field(None, description="how many events of this kind the trial saw")
    sum: str | None = Field(None, description="the total of a field over this kind's events: KIND with field or expr, or KIND.field")
    max: str | None = Field(None, description="the largest value of a field over this kind's events (KIND.field, or with field or expr)")
    min: str | None = Field(None, description="the smallest value of a field over this kind's events (KIND.field, or with field or expr)")
    within: Duration | None = Field(None, description="with exists/count/sum/max/min: only events at most this long after the trial opened")
    where: str | None = Field(None, description="with exists/count/sum/max/min: only events whose fields satisfy this expression")
    default: bool | int | float | str | None = Field(None, description="value when the trial saw no such event")

    @property
    def fold(self) -> tuple[str, str] | None:
        """(count|sum|max|min, the kind) of a folding variable, else None."""
        return next(((name, getattr(self, name)) for name in FOLDS if getattr(self, name) is not None), None)

    @property
    def folded_field(self) -> str | None:
        """The field a sum/max/min reads: `field`, or the part after the kind in the KIND.field shorthand."""
        fold = self.fold
        if fold is None or fold[0] == "count":
            return None
        return self.field if self.field is not None else (fold[1].split(".", 1)[1] if "." in fold[1] else None)

    @property
    def folded_kind(self) -> str | None:
        fold = self.fold
        return None if fold is None else fold[1].split(".", 1)[0]

    @model_validator(mode="after")
    def _one_form(self) -> Variable:
        taken = [name for name in ("first", "last", "exists", *FOLDS) if getattr(self, name) is not None]
        if len(taken) > 1:
            raise ValueError(f"a variable takes one of first, last, exists, {', '.join(FOLDS)}; got {', '.join(taken)}")
        if self.bisg is not None and self.fold is not None:
            raise ValueError("bisg gives one vector per event: use it with first or last")
        if self.truth is not None and (not taken or taken[0] not in ("first", "last") or (self.field is None and self.bisg is None)):
            raise ValueError("truth goes beside the probabilities it checks: a first or last variable with field or bisg")
        if self.exists is not None or self.count is not None:
            if self.field is not None or self.expr is not None or self.elapsed is not None or self.bisg is not None:
                raise ValueError(f"{'an exists' if self.exists else 'a count'} variable takes within and where, not field, expr or elapsed")
            return self
        fold = self.fold
        if fold is not None:
            shorthand = "." in fold[1]
            if self.elapsed is not None or sum((shorthand, self.field is not None, self.expr is not None)) != 1:
                raise ValueError(f"a {fold[0]} variable reads one value per event: {fold[0]}: KIND.field, or {fold[0]}: KIND with field or expr")
            return self
        if self.within is not None or self.where is not None:
            raise ValueError("within and where belong to exists, count, sum, max and min variables")
        if taken:
            if sum(value is not None for value in (self.field, self.expr, self.elapsed, self.bisg)) != 1:
                raise ValueError(f"a {taken[0]} variable takes exactly one of field, expr, elapsed, bisg")
        elif self.expr is None:
            raise ValueError("a variable needs first or last (with field, expr, elapsed or bisg), exists, count, sum, max, min, or expr")
        elif self.field is not None or self.elapsed is not None or self.bisg is not None:
            raise ValueError("field, elapsed and bisg need first or last")
        return self


class Aggregate(SpecModel):
    """A running total over closed trials, usable in a dynamic prior (e.g. places / applicants)."""

    count: Literal["trials"] | None = Field(None, description="count closed trials")
    sum: str | None = Field(None, description="sum a numeric variable over closed trials")
    where: str | None = Field(None, description="only trials whose variables satisfy this expression")

    @model_validator(mode="after")
    def _one_op(self) -> Aggregate:
        if (self.count is None) == (self.sum is None):
            raise ValueError("an aggregate takes exactly one of count: trials, sum: <variable>")
        return self
