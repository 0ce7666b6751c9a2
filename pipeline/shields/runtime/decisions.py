"""The energy shield applied to decision events in event-time order: the shielded record and, for every flip, an intervention record (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fairstream.language.models import ShieldSpec
from fairstream.records.events import Event
from fairstream.shields.energy.shields import AdaptiveGroupCounts, AdaptiveGroupShield, GroupCounts, GroupShield, uniform
from fairstream.shields.runtime.configured import configure
from fairstream.verdicts.alerts import stamp

SHIELDED = "shield.decision"
INTERVENTION = "shield.intervention"
STATUS = "shield.status"


@dataclass
class ShieldRun:
    """The shield's state over one decision stream; `decide` takes events in the order they must be shielded."""

    spec: ShieldSpec
    monitor: str
    shield: GroupShield | AdaptiveGroupShield = field(init=False)
    state: GroupCounts | AdaptiveGroupCounts = field(init=False)
    decisions: int = 0
    flips: int = 0

    def __post_init__(self) -> None:
        self.shield = configure(self.spec).shield
        self.state = self.shield.start()

    def decide(self, event: Event) -> list[dict[str, Any]]:
        """The shielded decision record, plus an intervention record when the decision was flipped."""
        spec = self.spec
        fields = event.fields
        group = str(fields[spec.group])
        if group not in spec.groups:  # outside the two compared groups: passed through unchanged
            return [{"type": SHIELDED, "monitor": self.monitor, "id": event.key, "flipped": False, "record": fields}]
        proposed = fields[spec.decision]
        raw = int(bool(proposed))
        verdict = self.shield.decide(raw, self.state, uniform(spec.seed, event.key), group)  # type: ignore[arg-type]
        self.state = self.shield.next_state(self.state, verdict)  # type: ignore[arg-type]
        self.decisions += 1
        if not verdict.flipped and (proposed is True or proposed is False or proposed == raw):
            shielded = fields  # the record already says what was decided
        else:
            shielded = {**fields, spec.decision: bool(verdict.shielded) if isinstance(proposed, bool) else verdict.shielded}
        out = [{"type": SHIELDED, "monitor": self.monitor, "id": event.key, "flipped": verdict.flipped, "record": shielded}]
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
            }
            out.append(stamp(body, self.monitor, INTERVENTION, event.time, event.key))
        return out

    def status(self, instant: int) -> dict[str, Any]:
        """Where the shield stands: the fairness value of the shielded decisions against its targets, and each group's counts."""
        counts = self.state.counts if isinstance(self.state, AdaptiveGroupCounts) else self.state
        first, second = self.spec.groups
        body = {
            "fairness": counts.gap,
            "running": list(self.spec.running),
            "limit": list(self.spec.limit),
            "burn_in": self.spec.burn_in,
            "decisions": self.decisions,
            "interventions": self.flips,
            "groups": {first: {"decisions": counts.seen_a, "accepted": counts.ones_a}, second: {"decisions": counts.seen_b, "accepted": counts.ones_b}},
        }
        return stamp(body, self.monitor, STATUS, instant, str(self.decisions))
