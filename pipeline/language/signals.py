"""Windows over the input's raw events and triggers over any value a monitor computes: the two spec sections that
watch the stream beside the trials (`windows:`, `triggers:`), as RTLola's sliding windows and triggers do."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from fairstream.language.fields import Duration, FieldPath, SpecModel

AGGREGATES = ("count", "sum", "mean", "min", "max")
WindowAggregate = Literal["count", "sum", "mean", "min", "max"]


class EventWindow(SpecModel):
    """An aggregate of the input events of one kind over a sliding span of event time, independent of trials: the
    events dated in (t − over, t] at each evaluation t, per value of `by` where it is given."""

    count: str | None = Field(None, description="count the events of this kind (`SCREEN`)")
    sum: str | None = Field(None, description="sum a numeric field over the events of its kind (`APPLICATION.amount`)")
    mean: str | None = Field(None, description="mean of a numeric field over the events of its kind (none in the span: null)")
    min: str | None = Field(None, description="least value of a numeric field over the events of its kind (none in the span: null)")
    max: str | None = Field(None, description="greatest value of a numeric field over the events of its kind (none in the span: null)")
    over: Duration = Field(
        description="the span of event time, a whole number of evaluation ticks (`evaluate.every`): `7d` covers the events "
        "dated in (t − 7d, t] at an evaluation at t"
    )
    by: FieldPath | None = Field(None, description="a field of the event: one value per value of it (a group), else one value")
    where: str | None = Field(None, description="only the events whose fields satisfy this expression (`branch == 'north'`)")

    @model_validator(mode="after")
    def _one_aggregate(self) -> EventWindow:
        given = [name for name in AGGREGATES if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"a window takes exactly one of {', '.join(AGGREGATES)}; got {', '.join(given) or 'none'}")
        if self.over <= 0:
            raise ValueError("over is a positive span of event time, like 7d")
        return self

    @property
    def aggregate(self) -> WindowAggregate:
        return next(name for name in AGGREGATES if getattr(self, name) is not None)  # type: ignore[return-value]

    @property
    def target(self) -> str:
        """`KIND` or `KIND.field`, as written."""
        return getattr(self, self.aggregate)

    @property
    def kind(self) -> str:
        return self.target.split(".", 1)[0]

    @property
    def field(self) -> str | None:
        """The field aggregated (`count` may leave it out: then every event of the kind counts)."""
        parts = self.target.split(".", 1)
        return parts[1] if len(parts) == 2 else None


class Trigger(SpecModel):
    """A condition over the monitor's values at each evaluation: a `fairness.trigger` record when it turns true
    (`raised`) and when it turns false again (`cleared`)."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$", description="names the trigger in its records")]
    when: str = Field(
        description="a bool expression over window values (`screens_7d['African-American'] < 20`), each part's `gap`, "
        "`ratio` and `status`, each group's `rate`, `hits` and `trials` in a part (`true_positive_rate.rate['Caucasian']`), "
        "`closed_trials` and `open_trials`"
    )
    message: str = Field("", description="one line for people, carried by every record of the trigger")
