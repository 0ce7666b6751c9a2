"""The Structs of the alerts beside a part's verdict turning: a change found, the merged alarms of a monitor and of a
job, a trigger turning (see `fairstream.records.wire`, whose base types they share) (pure)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta

from fairstream.records.envelope import CHANGED, JOB_MERGED, MERGED, TRIGGER
from fairstream.records.wire import BY_TYPE, Count, Envelope, Instant, Interval, Number, Pair, Record


class ChangeAlert(Envelope, tag_field="type", tag=CHANGED, kw_only=True):
    """A change detector found that a pair's gap moved by the shift or more, and estimates when. On <alerts>, or alerts.jsonl."""

    metric: str
    part: str
    pair: Annotated[Pair, Meta(description="the gap is the first group's rate (or mean) minus the second's")]
    direction: Annotated[Literal["up", "down"], Meta(description="whether the gap grew or shrank")]
    changed_at: Annotated[Instant, Meta(description="the estimated change point: the close time of the first pair after it")]
    found_at: Annotated[Instant, Meta(description="the close time of the trial that completed the alarm")]
    since: Annotated[Instant, Meta(description="when the detector started (or started again after its last change)")]
    gap_before: Number
    gap_before_interval: Interval
    gap_after: Number
    gap_after_interval: Interval
    pairs_before: Count
    pairs_after: Count
    shift: Number
    arl: Number
    assumption: str


class Carrier(Record, kw_only=True):
    """A pair whose own tests carry the merged evidence."""

    part: str
    pair: Pair
    share_of_evidence: Annotated[Number, Meta(description="the pair's term over the merged evidence")]
    log_wealth: Annotated[Number, Meta(description="the larger log-wealth of the pair's two violation bettors")]


class Stake(Record, kw_only=True):
    pair: Pair
    stake: Annotated[Number, Meta(description="the share of the pooled test's next stake on the pair's payoffs")]


class Pooled(Record, kw_only=True):
    """A part's pooled test: one bettor on the weighed average of its pairs' payoffs, a round of outcomes at a time."""

    part: str
    share_of_evidence: Number
    log_wealth: Number
    rounds: Count
    leaning_on: list[Stake]


class MergedAlert(Envelope, tag_field="type", tag=MERGED, kw_only=True):
    """Merged over every pair of a monitor (half the pairs' own tests, half each part's pooled test), the evidence says
    some pair violates the property, at the monitor's α. On <alerts>, or alerts.jsonl."""

    metric: str
    alpha: Number
    log_evidence: Annotated[Number, Meta(description="log of the merged e-process when the alarm was written")]
    log_threshold: Annotated[Number, Meta(description="log(1/α): the alarm rose when the merged e-process reached it")]
    pairs_tested: Count
    carriers: list[Carrier]
    pooled: list[Pooled]
    assumption: str


class MonitorEvidence(Record, kw_only=True):
    monitor: str
    log_evidence: Annotated[Number, Meta(description="log of the monitor's merged e-process at its last evaluation then")]
    share_of_evidence: Number


class JobMergedAlert(Envelope, tag_field="type", tag=JOB_MERGED, kw_only=True):
    """Averaged over the monitors of a job that merge their pairs, the evidence says some monitor's property is violated,
    at the job's α (the smallest of theirs). On <alerts>, or alerts.jsonl."""

    job: Annotated[str, Meta(description="job/<the job's first monitor>: also the record's monitor and chain writer")]
    alpha: Number
    log_evidence: Annotated[Number, Meta(description="log of the monitors' average merged evidence when the alarm rose")]
    log_threshold: Number
    monitors: list[MonitorEvidence]
    assumption: str


class TriggerAlert(Envelope, tag_field="type", tag=TRIGGER, kw_only=True):
    """A spec's trigger turned: its condition over the monitor's values became true (raised) or false again (cleared).
    On <alerts>, or alerts.jsonl."""

    trigger: Annotated[str, Meta(description="the trigger's name in the spec")]
    state: Annotated[Literal["raised", "cleared"], Meta(description="raised: the condition turned true; cleared: false again")]
    when: Annotated[str, Meta(description="the condition, as the spec writes it")]
    values: Annotated[
        dict[str, Any], Meta(description="every value the condition read at this evaluation, named as it names them (a table's entry as name['group'])")
    ]
    message: str


NOTICE_STRUCTS: dict[str, type[Record]] = {CHANGED: ChangeAlert, MERGED: MergedAlert, JOB_MERGED: JobMergedAlert, TRIGGER: TriggerAlert}
BY_TYPE.update(NOTICE_STRUCTS)  # `wire.check` takes them from here on
