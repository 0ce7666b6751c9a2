"""The energy shield applied to decision events in event-time order: the shielded record and, for every flip, an
intervention record (pure). For equal opportunity the counts are of the qualified: a decision waits for its label
event, and counts only when the label says qualified (the shield decides from the counts known by then)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from fairstream.language.models import ShieldSpec
from fairstream.records.envelope import INTERVENTION, SHIELDED, STATUS, stamp
from fairstream.records.events import Event
from fairstream.shields.energy.functions import MonotoneEnergy
from fairstream.shields.energy.placement import EVEN
from fairstream.shields.energy.shields import AdaptiveGroupCounts, AdaptiveGroupShield, GroupCounts, GroupShield, uniform
from fairstream.shields.energy.spread import SpreadCounts, SpreadEnergy, SpreadShield
from fairstream.shields.runtime.assumptions import AssumptionWatch
from fairstream.shields.runtime.configured import configure
from fairstream.shields.runtime.order import OVERTAKEN

UNDECLARED = "undeclared_group"
"""Why a decision passed unshielded: its group is not among the shield's groups."""
SHIELD_FIELD = "fairstream_shield"
"""The field a shielded decision record gains: whether it was flipped, how it arrived, and what replays it."""


def _group_counts(counts: GroupCounts | SpreadCounts, groups: list[str]) -> dict[str, dict[str, int]]:
    """Each group's decisions and acceptances so far."""
    if isinstance(counts, SpreadCounts):
        return {name: {"decisions": seen, "accepted": ones} for name, seen, ones in zip(groups, counts.seen, counts.ones)}
    first, second = groups
    return {first: {"decisions": counts.seen_a, "accepted": counts.ones_a}, second: {"decisions": counts.seen_b, "accepted": counts.ones_b}}


@lru_cache(maxsize=4096)
def member_of(energy: MonotoneEnergy | SpreadEnergy) -> dict[str, Any]:
    """The member's parameters, as `MonotoneEnergy(raw_gap, Target(τ, running, limit), alpha, k, domain=(-1, 1))` takes
    them (the limit is the one the member settles in), or for three or more groups `SpreadEnergy(alpha, scale, k)`;
    remembered per member, and shared by the records that name it (never changed)."""
    if isinstance(energy, SpreadEnergy):
        return {"family": "spread", "alpha": energy.alpha, "scale": energy.scale, "k": energy.k}
    target = energy.target
    return {"alpha": energy.alpha, "raw_gap": energy.p, "k": energy.k, "burn_in": target.burn_in, "running": list(target.running), "limit": list(target.limit)}


def assumed_values(spec: ShieldSpec) -> dict[str, dict[str, tuple[float, float]]]:
    """What the shield's bound assumed of the raw decisions, per assumption and group, as ranges of the mean: the rates
    and shares it was synthesized for ([v, v]), or the ranges of the adaptive shield; nothing when no bound was computed
    (`raw_gap` alone)."""
    groups = spec.groups
    shares = {groups[0]: spec.share} if len(groups) == 2 else dict(zip(groups, spec.shares or [1 / len(groups)] * len(groups), strict=True))
    share = {group: (value, value) for group, value in shares.items()}
    if spec.rates_within is not None:
        return {"rates_within": {group: (low, high) for group, (low, high) in zip(groups, spec.rates_within, strict=True)}, "share": share}
    if spec.rates is None:
        return {}
    return {"rates": {group: (rate, rate) for group, rate in zip(groups, spec.rates, strict=True)}, "share": share}


@dataclass
class ShieldRun:
    """The shield's state over one decision stream; `decide` takes events in the order they must be shielded."""

    spec: ShieldSpec
    monitor: str
    spec_sha256: str = ""
    """The sha256 of the spec file's bytes, in every record: with the seed and the member it replays each decision."""
    shield: GroupShield | AdaptiveGroupShield | SpreadShield = field(init=False)
    state: GroupCounts | AdaptiveGroupCounts | SpreadCounts = field(init=False)
    decisions: int = 0
    flips: int = 0
    late: int = 0
    """Decisions answered though they arrived later than the lateness allows."""
    future: int = 0
    """Decisions answered though dated implausibly far ahead."""
    overtaken: int = 0
    """Decisions answered though dated at or before one the clock had already answered (`shield.answer_within`)."""
    pending: OrderedDict[str, tuple[bool, int, int, int]] = field(default_factory=OrderedDict)
    """Equal opportunity: per decision awaiting its label, whether it is of the first group, its shielded decision, its
    number among the decisions (how late its label comes is counted in decisions) and its raw decision."""
    dropped: int = 0
    """Equal opportunity: decisions that left `pending` unlabelled, past `max_pending`."""
    unmatched: int = 0
    """Equal opportunity: labels of no decision awaiting one."""

    last_time: int = 0
    """The event time of the last decision answered: where a closing status record is dated."""
    reported: int = 0
    """Decisions answered (`answered`) when the last status record was written."""
    watch: AssumptionWatch = field(init=False)
    """The synthesis assumptions, checked decision by decision (see `AssumptionWatch`)."""

    def __post_init__(self) -> None:
        self.shield = configure(self.spec).shield
        self.state = self.shield.start()
        self.watch = AssumptionWatch(
            self.monitor, tuple(self.spec.groups), label_delay=self.spec.label_delay if self.opportunity else None,
            assumed=assumed_values(self.spec), check_level=self.spec.check_level,
        )  # fmt: skip

    @property
    def opportunity(self) -> bool:
        return self.spec.criterion == "equal_opportunity"

    def receive(self, event: Event, arrival: str = "") -> list[dict[str, Any]]:
        """The records of one released event: a decision is decided; for equal opportunity a label counts its decision."""
        if event.kind == self.spec.decisions:
            return self.decide(event, arrival)
        if self.opportunity and event.kind == self.spec.labels:
            self.learn(event)
        return []

    def learn(self, event: Event) -> None:
        """A decision's true label: a qualified one's shielded decision enters the counts."""
        waiting = self.pending.pop(event.key, None)
        if waiting is None:
            self.unmatched += 1
            return
        first, shielded, number, raw = waiting
        self.watch.label(self.decisions - number)
        if event.fields[self.spec.label] in (True, 1):  # type: ignore[index]
            self.state = self.state.add(first, shielded)  # type: ignore[union-attr]
            self.observe(self.spec.groups[0] if first else self.spec.groups[1], raw)

    def observe(self, group: str, raw: int) -> None:
        """One raw decision of a declared group (of a qualified one, for equal opportunity), for the checks of the raw
        rates and shares."""
        self.watch.observe("rates", group, raw)
        self.watch.observe("rates_within", group, raw)
        for name in self.spec.groups if len(self.spec.groups) > 2 else self.spec.groups[:1]:
            self.watch.observe("share", name, float(group == name))

    def decide(self, event: Event, arrival: str = "") -> list[dict[str, Any]]:
        """The shielded decision record, plus an intervention record when the decision was flipped; `arrival` says
        whether the decision came late, dated too far ahead or behind one already answered (the records say so, and it is
        counted)."""
        spec = self.spec
        fields = event.fields
        group = str(fields[spec.group])
        marked = {arrival: True} if arrival else {}
        self.late += arrival == "late"
        self.future += arrival == "future"
        self.overtaken += arrival == OVERTAKEN
        self.last_time = event.time
        if group not in spec.groups:  # outside the compared groups: passed through unchanged, and counted
            self.watch.stranger(group)
            facts = {"flipped": False, "passed": UNDECLARED, **marked, "seed": spec.seed, "spec_sha256": self.spec_sha256}
            return [{"type": SHIELDED, "monitor": self.monitor, "id": event.key, "flipped": False, **marked, "record": {**fields, SHIELD_FIELD: facts}}]
        proposed = fields[spec.decision]
        raw = int(bool(proposed))
        draw = uniform(spec.seed, event.key)
        facts = self.replay_facts(draw)
        verdict = self.shield.decide(raw, self.state, draw, group)  # type: ignore[arg-type]
        if self.opportunity:  # counted once the label says qualified
            self.pending[event.key] = (group == spec.groups[0], verdict.shielded, self.decisions + 1, raw)
            self.watch.decided(self.decisions + 1, event.key)
            if len(self.pending) > spec.max_pending:
                self.pending.popitem(last=False)
                self.dropped += 1
        else:
            self.state = self.shield.next_state(self.state, verdict)  # type: ignore[arg-type]
            self.observe(group, raw)
        self.decisions += 1
        self.watch.count_overdue(self.decisions, self.pending)
        shielded = {**fields, SHIELD_FIELD: {"flipped": verdict.flipped, **marked, **facts}}
        if verdict.flipped or not (proposed is True or proposed is False or proposed == raw):  # else the record says what was decided
            shielded[spec.decision] = bool(verdict.shielded) if isinstance(proposed, bool) else verdict.shielded
        out = [{"type": SHIELDED, "monitor": self.monitor, "id": event.key, "flipped": verdict.flipped, **marked, "record": shielded}]
        if self.decisions % spec.status_every == 0:
            out.append(self.status(event.time))
        if verdict.flipped:
            self.flips += 1
            body = {
                "decision_id": event.key,
                "group": group,
                "decision": raw,
                "shielded": verdict.shielded,
                "probability": verdict.probability,
                "fairness_before": verdict.before,
                "fairness_after": verdict.after,
                "cost": float(fields[spec.cost]) if spec.cost and fields.get(spec.cost) is not None else 1.0,
                "reason": verdict.reason,
                "interventions": self.flips,
                "decisions": self.decisions,
                **marked,
                **facts,
            }
            out.append(stamp(body, self.monitor, INTERVENTION, event.time, event.key))
        return out

    def closing(self) -> list[dict[str, Any]]:
        """At the end of the stream: a last status record, unless nothing was answered since the last one."""
        return [self.status(self.last_time, closing=True)] if self.answered > self.reported else []

    def replay_facts(self, draw: float) -> dict[str, Any]:
        """What an auditor needs to decide this decision again from its raw value and the shielded decisions before it:
        the member (its energy's parameters), the groups in the member's order (its raw gap is the first's rate minus
        the second's), the seed and the draw it gives, the spec's hash, for the adaptive shield the rate estimates
        the member was chosen by, and where the flips go first with uneven groups (`placement`)."""
        adaptive = isinstance(self.shield, AdaptiveGroupShield)
        energy = self.shield.energy(self.state) if adaptive else self.shield.energy  # type: ignore[arg-type, union-attr]
        facts: dict[str, Any] = {"member": member_of(energy), "groups": self.spec.groups, "seed": self.spec.seed, "draw": draw, "spec_sha256": self.spec_sha256}
        if adaptive:
            first, second = self.spec.groups
            facts["rates"] = {first: self.state.rate_a, second: self.state.rate_b}  # type: ignore[union-attr]
        placement = getattr(self.shield, "placement", EVEN)
        if not placement.even:
            first, second = self.spec.groups
            facts["placement"] = {"smaller": first if placement.first_smaller else second, "rates": dict(zip((first, second), placement.rates))}
        shares = getattr(self.shield, "shares", None)
        if shares is not None and len(set(shares)) > 1:
            groups = self.spec.groups
            facts["placement"] = {"shares": dict(zip(groups, shares)), "rates": dict(zip(groups, self.shield.rates))}  # type: ignore[union-attr]
        return facts

    @property
    def answered(self) -> int:
        """Decisions answered, of declared groups or not."""
        return self.decisions + sum(self.watch.undeclared.values())

    def status(self, instant: int, *, closing: bool = False) -> dict[str, Any]:
        """Where the shield stands: the fairness value of the shielded decisions against its targets, and each group's
        counts (of the qualified whose label has arrived, for equal opportunity); `closing`: the one at the end."""
        self.reported = self.answered
        counts = self.state.counts if isinstance(self.state, AdaptiveGroupCounts) else self.state
        body = {
            "fairness": counts.gap,
            "running": list(self.spec.running),
            "limit": list(self.spec.limit),
            "burn_in": self.spec.burn_in,
            "decisions": self.decisions,
            "interventions": self.flips,
            "late": self.late,
            "future": self.future,
            "overtaken": self.overtaken,
            "groups": _group_counts(counts, self.spec.groups),
        }
        if self.opportunity:  # the fairness value and the groups' counts are of the qualified
            body |= {"criterion": self.spec.criterion, "pending": len(self.pending), "dropped": self.dropped, "unmatched": self.unmatched}
        assumptions = self.watch.report()
        if assumptions:
            body["assumptions"] = assumptions
        return stamp(body, self.monitor, STATUS, instant, str(self.decisions), *(("end",) if closing else ()))
