"""The output records as msgspec Structs: the contract every record is checked against where it becomes final (as it is
linked into its chain), and what the published JSON Schemas are generated from; the sinks encode each record once. A
field a record may leave out defaults to UNSET; a field no Struct names is refused, so a record cannot change shape
without its Struct and its schema (pure)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from fairstream.records.envelope import (
    ALERT_TYPES,
    DEAD_LETTER,
    ESTIMATE,
    INTERVENTION,
    SEAL,
    SHIELDED,
    STATUS,
    UNDELIVERED,
)

Number = int | float
"""A JSON number as the record holds it: an integer stays an integer."""
Count = Annotated[int, Meta(ge=0)]
NonNegative = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]
Probability = Annotated[int, Meta(ge=0, le=1)] | Annotated[float, Meta(ge=0, le=1)]
Instant = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
Hex64 = Annotated[str, Meta(pattern="^[0-9a-f]{64}$")]
RecordId = Annotated[str, Meta(pattern="^[0-9a-f]{24}$", description="deterministic: a replay repeats it, so consumers de-duplicate by it")]
Interval = Annotated[list[Number], Meta(min_length=2, max_length=2, description="[low, high]")]
Pair = Annotated[list[str], Meta(min_length=2, max_length=2)]
WIDENED = "the interval was widened to hold the point it names (a confidence sequence that moved past it, a credible interval leaving out its mode)"
Status = Literal["violated", "certified", "satisfied", "inconclusive"]
Verdict = Literal["point", "confident", "anytime", "change"]


class Record(Struct, forbid_unknown_fields=True, kw_only=True):
    """Every output record's Struct: unknown fields refused, fields left out not written."""


class Chain(Record, kw_only=True):
    """The record's link in its writer's hash chain: the hash covers the record without emitted_at and chain.hash (see the Bias audits page)."""

    writer: Annotated[str, Meta(pattern="^(monitor|job|dead_letters|shield)/.+$")]
    seq: Count
    prev: Hex64
    spec: Annotated[str, Meta(pattern="^([0-9a-f]{64})?$", description="the sha256 of the spec's text; empty for a spec given without one (a plan built in Python)")]
    hash: Hex64
    version: Annotated[str, Meta(description="the fairstream version that wrote the record (with `spec`, what it was made from)")]
    sig: str | UnsetType = UNSET
    """An Ed25519 signature of the hash, where the run signs its records."""


class Envelope(Record, kw_only=True):
    """What every result record carries: its id, type, monitor, times and chain link."""

    alert_id: RecordId
    monitor: Annotated[str, Meta(min_length=1, description="the spec's monitor name")]
    event_time: Annotated[Instant, Meta(description="the event time of the evaluation (UTC)")]
    emitted_at: Annotated[Instant, Meta(description="the wall-clock time the record was written (UTC)")]
    row: Annotated[int, Meta(ge=1, description="a plain table's records: the rows read up to this evaluation (its event time is the last row's number in ms)")] | UnsetType = UNSET
    chain: Chain


class Group(Record, kw_only=True):
    """One group's numbers in a part; null while its cell is suppressed (publish.min_cell)."""

    estimate: Annotated[Number | None, Meta(description="the published estimate (MAP under the prior for point verdicts)")] | UnsetType = UNSET
    rate: Annotated[Number | None, Meta(description="the raw rate, hits over trials")] | UnsetType = UNSET
    hits: Number | None | UnsetType = UNSET
    trials: Annotated[NonNegative | None, Meta(description="trials counted; groups given as probabilities: their expected number, the weight rounded")] | UnsetType = UNSET
    interval: Interval | None | UnsetType = UNSET
    interval_of: str | None | UnsetType = UNSET
    interval_widened: Annotated[Literal[True], Meta(description=WIDENED)] | UnsetType = UNSET
    weight: Annotated[Number | None, Meta(description="the sum of the cell's weights: metric.weight, or groups given as probabilities")] | UnsetType = UNSET
    effective_trials: Annotated[Number | None, Meta(description="metric.weight: Kish's effective trials (Σw)²/Σw², which the evidence floor and intervals count")] | UnsetType = UNSET
    weighted_rate: Annotated[Number | None, Meta(description="groups given as probabilities: the probability-weighted rate, pulled toward the pooled rate")] | UnsetType = UNSET
    recalibrated_estimate: Annotated[Number | None, Meta(description="groups given as probabilities, found miscalibrated on the self-reported trials: the moment estimate from the probabilities recalibrated on them (no interval)")] | UnsetType = UNSET
    supply: Number | None | UnsetType = UNSET
    demand: Number | None | UnsetType = UNSET
    below_floor: Annotated[bool, Meta(description="fewer trials than the evidence floor: no verdict rests on it")] | UnsetType = UNSET
    suppressed: Annotated[bool, Meta(description="fewer trials than publish.min_cell: its numbers are withheld")] | UnsetType = UNSET
    certified: bool | UnsetType = UNSET
    bound: Number | None | UnsetType = UNSET
    tau: Number | None | UnsetType = UNSET
    tau_bound: Number | None | UnsetType = UNSET
    delta: Number | UnsetType = UNSET
    g_upper: Annotated[Number | None, Meta(description="the bound on g; above 0: not certified")] | UnsetType = UNSET
    labels: str | UnsetType = UNSET
    bounds: list[Number] | None | UnsetType = UNSET
    unlabeled: Number | None | UnsetType = UNSET
    unlabeled_predicted: Number | None | UnsetType = UNSET
    coverage: Number | None | UnsetType = UNSET
    withheld: str | UnsetType = UNSET


class Constraint(Record, kw_only=True):
    """A delayed-impact constraint (ELF): the direction, τ and δ, and the bound certifying it."""

    direction: Literal["at_least", "at_most"]
    tau: Number | str | None
    delta: Number
    bound: str
    baseline: Annotated[int | str | None, Meta(description="the baseline's length in milliseconds, where τ is each group's own mean over it")] | UnsetType = UNSET


class PartFields(Record, kw_only=True):
    """A part's numbers and verdict: the fields of an estimate's part, and of a part's alert at its top level."""

    groups: dict[str, Group]
    overall: Annotated[Group, Meta(description="compare: overall: the part's rate over every group counted, each group judged against it (the pair names it (overall))")] | UnsetType = UNSET
    status: Annotated[Status, Meta(description="the part's three-valued verdict (point verdicts: violated or satisfied)")]
    gap: Annotated[Number | None, Meta(description="the largest difference of estimates between two groups")] | UnsetType = UNSET
    ratio: Annotated[Number | None, Meta(description="the smallest ratio of estimates between two groups")] | UnsetType = UNSET
    pair: Annotated[Pair | None, Meta(description="the two groups the gap is between")] | UnsetType = UNSET
    raw_gap: Number | None | UnsetType = UNSET
    raw_ratio: Number | None | UnsetType = UNSET
    threshold: Number | UnsetType = UNSET
    violated: Annotated[bool | None, Meta(description="null while no verdict can be given")] | UnsetType = UNSET
    clear: bool | None | UnsetType = UNSET
    hysteresis: Number | UnsetType = UNSET
    alpha: Number | UnsetType = UNSET
    log_wealth: Number | None | UnsetType = UNSET
    log_wealth_within: Number | None | UnsetType = UNSET
    gap_suppressed: Annotated[Literal[True], Meta(description="a group of the pair is suppressed: nothing drawn from its cell is published")] | UnsetType = UNSET
    failing: Annotated[list[str], Meta(description="a constraint part: the groups its bound cannot certify")] | UnsetType = UNSET
    interval: Interval | None | UnsetType = UNSET
    interval_of: str | UnsetType = UNSET
    interval_reason: str | UnsetType = UNSET
    interval_validity: Literal["fixed_time", "anytime"] | UnsetType = UNSET
    interval_widened: Annotated[Literal[True], Meta(description=WIDENED)] | UnsetType = UNSET
    time_to_verdict: dict[str, Any] | None | UnsetType = UNSET
    median: Annotated[Number | None, Meta(description="scoring_rate: the median score the rates count above (null before any score)")] | UnsetType = UNSET
    counted: Annotated[Literal["matured", "released_in_opening_order"], Meta(description="anytime: which trials the rates count")] | UnsetType = UNSET
    opened_by: Annotated[Instant, Meta(description="anytime with close_after: the rates count the trials opened by this instant")] | UnsetType = UNSET
    prior: Number | None | UnsetType = UNSET
    confidence: Number | None | UnsetType = UNSET
    verdict: Verdict | UnsetType = UNSET
    constraint: Constraint | UnsetType = UNSET
    labels: Annotated[str, Meta(description="partly seen labels: weighted, bounded or selective")] | UnsetType = UNSET
    groups_from: Annotated[Literal["probabilities"], Meta(description="each trial's group is known only as probabilities (a proxy)")] | UnsetType = UNSET
    assumption: Annotated[str, Meta(description="what the estimates, intervals and verdict rest on")] | UnsetType = UNSET
    bounds_assumption: Annotated[str, Meta(description="what each group's bounds rest on")] | UnsetType = UNSET
    calibration: Annotated[dict[str, Any], Meta(description="groups given as probabilities with a truth field: the calibration test on the self-reported trials (sample, level, held, worst statistic)")] | UnsetType = UNSET
    outside_unit: Annotated[list[str], Meta(description="groups given as probabilities: the groups whose estimated rate lies outside [0, 1], a sign the proxy is not calibrated")] | UnsetType = UNSET


class Trials(Record, kw_only=True):
    """The trials an evaluation counts."""

    closed: Count
    incomplete: Count
    evicted: Annotated[Count, Meta(description="trials not kept: opened while trial.max_open trials were open")] | UnsetType = UNSET
    unfinished: Count | UnsetType = UNSET
    open: Annotated[
        int, Meta(description="trials opened and not closed at this evaluation, where a trigger reads open_trials (evicted trials leave it)")
    ] | UnsetType = UNSET


class Decisions(Record, kw_only=True):
    """The event time of the first event of a kind that opens trials (the first decision), once one lies at or before the evaluation."""

    first: Instant


class Marginal(Record, kw_only=True):
    """One value's hits and trials, null and suppressed below publish.min_cell."""

    hits: int | None
    trials: int | None
    suppressed: Literal[True] | UnsetType = UNSET


class Untracked(Record, kw_only=True):
    """The groups past metric.max_groups in a part, and their trials."""

    groups: Count
    trials: Count


class Detection(Record, kw_only=True):
    """Change verdicts' settings."""

    shift: Annotated[Number, Meta(description="the smallest change of a gap worth finding")]
    arl: Annotated[Number, Meta(description="the average number of trials between false alarms on a stream that never changes, restarts included")]


class Estimate(Envelope, tag_field="type", tag=ESTIMATE, kw_only=True):
    """One evaluation of a monitor: every part of its metric with each group's numbers. On <alerts>.estimates, or estimates.jsonl."""

    metric: str
    verdict: Verdict
    trials: Trials
    parts: dict[str, PartFields]
    prior: Number | None | UnsetType = UNSET
    confidence: Number | UnsetType = UNSET
    alpha: Number | UnsetType = UNSET
    family: str | UnsetType = UNSET
    decisions: Decisions | UnsetType = UNSET
    marginals: Annotated[
        dict[str, dict[str, dict[str, Marginal]]],
        Meta(description="an intersectional group's trials counted by each of its variables alone: variable → part → value → hits and trials"),
    ] | UnsetType = UNSET
    unseen_groups: Annotated[
        list[str], Meta(min_length=1, description="listed groups (metric.groups) no trial was counted in so far; absent while every listed group has one")
    ] | UnsetType = UNSET
    unlisted_groups: Annotated[
        dict[str, Annotated[int, Meta(ge=1)]],
        Meta(description="closed trials per group value outside metric.groups since the run began (beyond 32 values, the rest as '(other values)')"),
    ] | UnsetType = UNSET
    untracked: dict[str, Untracked] | UnsetType = UNSET
    aggregates: dict[str, Number] | UnsetType = UNSET
    detection: Annotated[Detection, Meta(description="change verdicts: what the detectors look for")] | UnsetType = UNSET
    windows: Annotated[
        dict[str, Number | None | dict[str, Number | None]],
        Meta(description="the spec's windows over raw events at this evaluation: a number (null: a mean, min or max of no event), or one per group of the window's by field"),
    ] | UnsetType = UNSET


AlertType = Literal["fairness.violation", "fairness.recovered", "fairness.certified", "fairness.uncertified"]


PartAlert = msgspec.defstruct(
    "PartAlert",
    [
        ("type", AlertType),
        ("metric", str),
        ("part", str),
        *((field.name, field.type, field.default) for field in msgspec.structs.fields(PartFields)),
    ],
    bases=(Envelope,),
    kw_only=True,
    module=__name__,
    namespace={"__doc__": "A part's verdict turned (violation, recovery, certification or its loss); the part's fields at the top level. On <alerts>, or alerts.jsonl."},
)
"""An alert of a part: the envelope, the metric and part, and every field of `PartFields`."""


class ConstraintAlert(Envelope, kw_only=True):
    """A delayed-impact constraint stopped, or started again, being certified for a group. On <alerts>, or alerts.jsonl."""

    type: Literal["fairness.violation", "fairness.recovered"]
    metric: str
    part: str
    group: str
    constraint: Constraint
    estimate: Number | None
    trials: Count
    bound: Number | None
    g_upper: Annotated[Number | None, Meta(description="the bound on g; above 0: not certified")]
    certified: bool
    tau: Number | None | UnsetType = UNSET
    delta: Number | UnsetType = UNSET
    tau_bound: Number | None | UnsetType = UNSET


class Member(Record, kw_only=True):
    """The member of the energy family that decided."""

    alpha: Number
    k: int
    family: Literal["spread"] | UnsetType = UNSET
    raw_gap: Number | UnsetType = UNSET
    burn_in: int | UnsetType = UNSET
    running: list[Number] | UnsetType = UNSET
    limit: list[Number] | UnsetType = UNSET
    scale: Number | UnsetType = UNSET


class FlipPlacement(Record, kw_only=True):
    """Where a shield's flips go first with groups of uneven share (see Shields, deciding a decision again)."""

    rates: dict[str, Probability]
    smaller: Annotated[str, Meta(description="two groups: the group whose flips come first")] | UnsetType = UNSET
    shares: Annotated[dict[str, Probability], Meta(description="three or more groups: each group's share of the decisions")] | UnsetType = UNSET


class Intervention(Envelope, tag_field="type", tag=INTERVENTION, kw_only=True):
    """A decision the shield flipped, with the probability it was flipped with and the fairness before and after. On <alerts>, or alerts.jsonl."""

    decision_id: str
    group: str
    decision: Literal[0, 1]
    shielded: Literal[0, 1]
    probability: Probability
    fairness_before: Number
    fairness_after: Number
    cost: NonNegative
    reason: str
    decisions: Annotated[int, Meta(ge=1)]
    interventions: Annotated[int, Meta(ge=1)]
    member: Member
    seed: Annotated[int, Meta(description="the shield's seed: the draw is uniform(seed, decision_id)")]
    draw: Annotated[float, Meta(ge=0, lt=1, description="the uniform draw the flip was decided by")]
    spec_sha256: Annotated[Hex64, Meta(description="the sha256 of the spec file's bytes")]
    groups: Annotated[list[str], Meta(min_length=2, max_length=1000, description="the compared groups in the member's order")]
    late: Literal[True] | UnsetType = UNSET
    future: Literal[True] | UnsetType = UNSET
    overtaken: Annotated[Literal[True], Meta(description="dated at or before a decision already answered by the clock (shield.answer_within)")] | UnsetType = UNSET
    rates: Annotated[dict[str, Number], Meta(description="the adaptive shield's estimates of each group's raw rate before this decision")] | UnsetType = UNSET
    placement: Annotated[FlipPlacement, Meta(description="with uneven groups: the smaller group, whose flips come first, and the raw rates the flips are weighed by")] | UnsetType = UNSET


class GroupDecisions(Record, kw_only=True):
    """A group's decisions and acceptances so far."""

    decisions: Count
    accepted: Count


class ShieldStatus(Envelope, tag_field="type", tag=STATUS, kw_only=True):
    """The shield's state now and then: decisions, interventions, each group's acceptances. On <alerts>.estimates, or estimates.jsonl."""

    decisions: Count
    interventions: Count
    fairness: Number
    groups: dict[str, GroupDecisions]
    burn_in: Count | UnsetType = UNSET
    limit: list[Number] | UnsetType = UNSET
    running: list[Number] | UnsetType = UNSET
    late: Count | UnsetType = UNSET
    future: Count | UnsetType = UNSET
    overtaken: Count | UnsetType = UNSET
    criterion: Literal["equal_opportunity"] | UnsetType = UNSET
    pending: Count | UnsetType = UNSET
    dropped: Count | UnsetType = UNSET
    unmatched: Count | UnsetType = UNSET
    assumptions: Annotated[dict[str, dict[str, Any]], Meta(description="the shield's synthesis assumptions and whether each held so far")] | UnsetType = UNSET


class DeadLetter(Record, tag_field="type", tag=DEAD_LETTER, kw_only=True):
    """A record the pipeline could not use, with the reason. On <alerts>.dlq, or dead_letters.jsonl."""

    alert_id: RecordId
    reason: Annotated[str, Meta(pattern="^[a-z_]+$")]
    detail: str
    record: Annotated[str, Meta(description="the record as it arrived, its group-defining fields redacted (dead_letters.redact); a hash where it is not text")]
    partition: Count
    offset: Annotated[int, Meta(ge=-1)]
    count: Annotated[int, Meta(ge=1, description="the running number of dead letters of its input partition")]
    chain: Chain
    topic: Annotated[str, Meta(description="the topic it came from, where an input partition reads several")] | UnsetType = UNSET
    emitted_at: Instant | UnsetType = UNSET


class Seal(Record, tag_field="type", tag=SEAL, kw_only=True):
    """A seal of a writer's hash chain, itself a link of it: a checkpoint every 100th place, and the closing seal when the writer's input ends. In seals.jsonl, or on <alerts>.seals."""

    alert_id: Annotated[str, Meta(pattern="^[0-9a-f]{24}$", description="deterministic: a hash of the writer and the seal's place")]
    writer: Annotated[str, Meta(description="monitor/<name>, dead_letters/<partition> or shield/<name>")]
    final: Annotated[bool, Meta(description="true: the closing seal, the writer's input has ended; false: a checkpoint")]
    records: Annotated[int, Meta(ge=0, description="the records before it in its chain, its own place")]
    last: Annotated[Hex64, Meta(description="the hash of the record before it")]
    chain: Chain
    emitted_at: Instant | UnsetType = UNSET


class Undelivered(Record, tag_field="type", tag=UNDELIVERED, kw_only=True):
    """An alert a notification endpoint (Alertmanager, a webhook) never accepted. On <alerts>.dlq, or undelivered.jsonl beside a file run's outputs. Outside the records' hash chains: an operational notice, not a result."""

    alert_id: Annotated[str | None, Meta(description="the alert's id, as on the alert topic")]
    target: Literal["alertmanager", "webhook"]
    endpoint: Annotated[str, Meta(description="scheme, host and port of the endpoint; never its credentials or path")]
    reason: Annotated[str, Meta(description="why it was not delivered: the endpoint's last failure, a full queue, or the run's end")]
    record: Annotated[dict[str, Any], Meta(description="the alert record as written to the alert topic or alerts.jsonl")]


class ShieldDecision(Record, tag_field="type", tag=SHIELDED):
    """A decision the shield answered, on its way out: the decision maker's own record with the shielded decision in
    place and the shield's facts under `fairstream_shield` (written as the record alone: to <topic>.shielded, or
    decisions_shielded.jsonl)."""

    monitor: str
    id: str
    flipped: bool
    record: dict[str, Any]
    late: Literal[True] | UnsetType = UNSET
    future: Literal[True] | UnsetType = UNSET
    overtaken: Annotated[Literal[True], Meta(description="dated at or before a decision already answered by the clock (shield.answer_within)")] | UnsetType = UNSET


def struct_of(record: dict[str, Any]) -> type[Record]:
    """The Struct a record of this type and shape is encoded by."""
    kind = record["type"]
    if kind in ALERT_TYPES:
        return ConstraintAlert if "constraint" in record else PartAlert
    return BY_TYPE[kind]


BY_TYPE: dict[str, type[Record]] = {
    ESTIMATE: Estimate,
    INTERVENTION: Intervention,
    STATUS: ShieldStatus,
    DEAD_LETTER: DeadLetter,
    SEAL: Seal,
    UNDELIVERED: Undelivered,
}

_ENCODER = msgspec.json.Encoder()


def check(record: dict[str, Any]) -> dict[str, Any]:
    """The record, once it fits its Struct: a record that does not (a field no Struct names, a value of another type)
    raises `msgspec.ValidationError`. Records are checked where they become final, as they are linked into their chain."""
    msgspec.convert(record, struct_of(record))
    return record


def encode(record: dict[str, Any]) -> bytes:
    """A record as the sink writes it: its JSON, once, in the order of its fields."""
    return _ENCODER.encode(record)


def encode_decision(record: dict[str, Any]) -> bytes:
    """A shielded decision as it is written: the decision maker's record, with the shield's facts."""
    return _ENCODER.encode(msgspec.convert(record, ShieldDecision).record)
