"""What one run wrote, counted as it wrote it: records read, dead letters by reason, and per monitor
the last evaluation and each pair's first violation. A run's summary and exit code come from here, never from reading
its outputs back, so an output that already held older records cannot change what a run reports, and memory stays
bounded however much it writes. Tallies of cooperating processes merge into one."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from fairstream.records.envelope import CERTIFIED, CHANGED, JOB_MERGED, MERGED, RECOVERED, TRIGGER, UNCERTIFIED, VIOLATION
from fairstream.records.hints import FIXES
from fairstream.verdicts.summary import FirstViolation, note_violations, publishes_groups


class MonitorTally(BaseModel):
    """One monitor's evaluations as they were written."""

    estimates: int = 0
    last: dict[str, Any] | None = None
    """The last evaluation written."""
    latest_published: dict[str, Any] | None = None
    """The last evaluation that published an estimate of any group (a window may have emptied since)."""
    first: dict[str, FirstViolation] = Field(default_factory=dict)
    """Each part and pair's (or constraint group's) first violation, filed as `note_violations` files them."""
    violations: int = 0
    recoveries: int = 0
    certifications: int = 0
    uncertifications: int = 0
    changes: list[dict[str, Any]] = Field(default_factory=list)
    """The `fairness.changed` records, in the order written."""
    triggers: dict[str, list[int]] = Field(default_factory=dict)
    """Per trigger: [times raised, times cleared], and whether it stands raised at the end (raised > cleared)."""
    somewhere: dict[str, Any] | None = None
    """The `fairness.violated_somewhere` record: the merged evidence over every pair reached 1/α."""

    def observe_estimate(self, record: dict[str, Any]) -> None:
        self.estimates += 1
        self.last = record
        if publishes_groups(record):
            self.latest_published = record
        note_violations(self.first, record)

    def first_violations(self) -> list[FirstViolation]:
        """Each part and pair's first violation, in time order."""
        return sorted(self.first.values(), key=lambda v: (v.event_time, v.part, v.high, v.low))

    def merge(self, other: MonitorTally) -> None:
        """Add another process's share of this monitor (a monitor's evaluations are written by one process)."""
        self.estimates += other.estimates
        self.violations += other.violations
        self.recoveries += other.recoveries
        self.certifications += other.certifications
        self.uncertifications += other.uncertifications
        self.changes = sorted([*self.changes, *other.changes], key=lambda change: (change["found_at"], change["part"], change["pair"]))
        if other.somewhere is not None and (self.somewhere is None or other.somewhere["event_time"] < self.somewhere["event_time"]):
            self.somewhere = other.somewhere
        for mine, theirs in (("last", other.last), ("latest_published", other.latest_published)):
            if theirs is not None and (getattr(self, mine) is None or theirs["event_time"] >= getattr(self, mine)["event_time"]):
                setattr(self, mine, theirs)
        for key, violation in other.first.items():
            known = self.first.get(key)
            if known is None or violation.event_time < known.event_time:
                self.first[key] = violation


REJECTED_SHARE = 0.01
"""A run that rejects more of what it read than this explains its leading reasons in the summary."""

LATE_SHARE = 0.01
"""A partition more of whose records than this came late (beyond input.lateness) is named in a warning and the summary."""


def late_line(partition: int, late: int, read: int) -> str:
    """The one line that names a partition losing records to lateness, and what to change."""
    return (
        f"input partition {partition}: {late / read:.1%} of its records ({late:,} of {read:,}) came older than input.lateness "
        "allows and are late dead letters; raise input.lateness (a file: leave out --sorted and input.sorted, so it is sorted)"
    )


BREAK_NAMES = {"label_delay": "overdue labels", "groups": "decisions of undeclared groups"}
"""What a break of an assumption counts, where it is not a group outside what the bound assumed."""


class RunTally(BaseModel):
    """Everything a run's summary and exit code rest on."""

    resumed: bool = False
    """The run went on from a recovery store's snapshot: what it read is what came after it."""
    read: int = 0
    """Input records read, valid or not."""
    read_by_partition: dict[int, int] = Field(default_factory=dict)
    late_by_partition: dict[int, int] = Field(default_factory=dict)
    """Late dead letters per input partition: its share of what the partition read is checked against `LATE_SHARE`."""
    dead_letters: dict[str, int] = Field(default_factory=dict)
    """Records rejected, per reason."""
    examples: dict[str, str] = Field(default_factory=dict)
    """The first dead letter's detail per reason: what a mass rejection is explained with."""
    unwritten: int = 0
    """Dead letters counted but not written: past the dead-letter file's size cap."""
    monitors: dict[str, MonitorTally] = Field(default_factory=dict)
    shielded: int = 0
    """Decisions a shield passed on."""
    interventions: int = 0
    shield_assumptions: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per shield, its assumptions as its last status record reported them."""
    notifications: dict[str, int] | None = None
    """Where the run posts alerts: posts accepted (`sent`), posts that failed (`failed`), and alerts an endpoint never
    accepted (`undelivered`, written down as `pipeline.undelivered` records)."""
    undelivered_to: str | None = None
    """Where the undelivered alerts are written down."""
    job_alarm: dict[str, Any] | None = None
    """The `fairness.job_violated_somewhere` record: the monitors' merged evidence, averaged, reached 1/α."""
    group: dict[str, Any] | None = None
    """A member of a consumer group: partitions it took over from another's checkpoint (`partitions_taken`), times it
    took the merge over (`merges_taken`), steps its merge dropped as merged before (`duplicate_steps`) and whether the
    job reached its end (`ended`)."""

    @property
    def rejected(self) -> int:
        return sum(self.dead_letters.values())

    @property
    def accepted(self) -> int:
        return max(self.read - self.rejected, 0)

    def observe(self, record: dict[str, Any]) -> None:
        """Count one output record."""
        kind = record.get("type")
        if kind == "pipeline.dead_letter":
            self.dead_letters[record["reason"]] = self.dead_letters.get(record["reason"], 0) + 1
            self.examples.setdefault(record["reason"], record["detail"])
            if record["reason"] == "late":
                self.late_by_partition[record["partition"]] = self.late_by_partition.get(record["partition"], 0) + 1
        elif kind == "fairness.estimate":
            self._monitor(record["monitor"]).observe_estimate(record)
        elif kind == VIOLATION:
            self._monitor(record["monitor"]).violations += 1
        elif kind == RECOVERED:
            self._monitor(record["monitor"]).recoveries += 1
        elif kind == CERTIFIED:
            self._monitor(record["monitor"]).certifications += 1
        elif kind == UNCERTIFIED:
            self._monitor(record["monitor"]).uncertifications += 1
        elif kind == CHANGED:
            self._monitor(record["monitor"]).changes.append(record)
        elif kind == TRIGGER:
            turns = self._monitor(record["monitor"]).triggers.setdefault(record["trigger"], [0, 0])
            turns[record["state"] != "raised"] += 1
        elif kind == MERGED:
            self._monitor(record["monitor"]).somewhere = record
        elif kind == JOB_MERGED:
            self.job_alarm = record
        elif kind == "shield.decision":
            self.shielded += 1
        elif kind == "shield.intervention":
            self.interventions += 1
        elif kind == "shield.status" and "assumptions" in record:
            self.shield_assumptions[record["monitor"]] = record["assumptions"]

    def leading_rejections(self, limit: int = 3) -> list[str]:
        """The most frequent dead-letter reasons, each with its count, an example and the spec field behind it."""
        leading = sorted(self.dead_letters.items(), key=lambda item: (-item[1], item[0]))[:limit]
        return [
            f"{reason}: {count:,} of {max(self.read, count):,} records, e.g. {self.examples.get(reason, '?')} (spec: {FIXES.get(reason, 'input')})"
            for reason, count in leading
        ]

    def notifications_line(self) -> str | None:
        """`notifications: 12 posts accepted, 3 failed; 2 alert(s) never accepted, written to …`, when the run posts alerts."""
        if self.notifications is None:
            return None
        counts = self.notifications
        line = f"notifications: {counts['sent']:,} post(s) accepted, {counts['failed']:,} failed"
        if counts["undelivered"]:
            line += f"; {counts['undelivered']:,} alert(s) never accepted, written to {self.undelivered_to}"
        return line

    def broken_assumptions(self) -> list[str]:
        """One line per shield whose assumptions broke: which, and how often (what the summary warns of)."""
        lines = []
        for monitor, assumptions in sorted(self.shield_assumptions.items()):
            broken = [f"{name} ({report['breaks']:,} {BREAK_NAMES.get(name, 'groups outside')})" for name, report in assumptions.items() if not report["held"]]
            if broken:
                lines.append(f"shield {monitor}: assumptions broken: {', '.join(broken)}; its stated bound does not cover this stream (docs: shields, assumptions)")
        return lines

    def late_shares(self) -> list[tuple[int, int, int]]:
        """(partition, late, read) of each partition whose late share passes `LATE_SHARE`."""
        return [
            (partition, late, read)
            for partition, late in sorted(self.late_by_partition.items())
            if late > LATE_SHARE * (read := max(self.read_by_partition.get(partition, 0), late))
        ]

    def _monitor(self, name: str) -> MonitorTally:
        tally = self.monitors.get(name)
        if tally is None:
            tally = self.monitors[name] = MonitorTally()
        return tally

    def merge(self, other: RunTally) -> None:
        """Add another process's tally of the same run."""
        self.read += other.read
        self.unwritten += other.unwritten
        self.resumed = self.resumed or other.resumed
        self.shielded += other.shielded
        self.interventions += other.interventions
        self.shield_assumptions |= other.shield_assumptions
        self.job_alarm = self.job_alarm or other.job_alarm
        if other.notifications is not None:
            self.undelivered_to = self.undelivered_to or other.undelivered_to
            mine = self.notifications = self.notifications or {}
            for name, count in other.notifications.items():
                mine[name] = mine.get(name, 0) + count
        for reason, count in other.dead_letters.items():
            self.dead_letters[reason] = self.dead_letters.get(reason, 0) + count
        for reason, detail in other.examples.items():
            self.examples.setdefault(reason, detail)
        for mine, theirs in ((self.read_by_partition, other.read_by_partition), (self.late_by_partition, other.late_by_partition)):
            for partition, count in theirs.items():
                mine[partition] = mine.get(partition, 0) + count
        for name, tally in other.monitors.items():
            self._monitor(name).merge(tally)
