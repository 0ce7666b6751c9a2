"""A budget of groups per part: the first `limit` groups of a part are tracked (estimated, judged, published); the
trials of any further group are counted, not tracked, so no input can grow a record or the merge's state without
bound. And the listed groups against the data: a listed group no trial carried is named beside the values outside the
list that trials did carry, near matches first, so a misspelt group passes in no silence (pure)."""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fairstream.trials.outcomes import UNLISTED

log = logging.getLogger("fairstream.monitor")

MAX_UNLISTED = 32
"""Distinct group values outside the list counted one by one; the trials of further values are counted together."""

OTHER_VALUES = "(other values)"
"""What the trials of group values beyond `MAX_UNLISTED` are counted as."""

UNSEEN_AFTER = 10
"""Trials outside the listed groups after which a listed group still unseen is warned about while the run goes on."""


@dataclass
class TrackedGroups:
    """Which groups each part tracks, admitted in a deterministic order (sorted within one batch), and what the rest held.

    >>> groups = TrackedGroups("m", limit=2)
    >>> sorted(groups.admit([("rate", "c"), ("rate", "a"), ("rate", "b")]))
    [('rate', 'a'), ('rate', 'b')]
    >>> groups.miss("rate", "c", 5); groups.report()
    {'rate': {'groups': 1, 'trials': 5}}
    """

    monitor: str
    limit: int
    tracked: dict[str, set[str]] = field(default_factory=dict)
    untracked: dict[str, dict[str, int]] = field(default_factory=dict)
    warned: bool = False

    def admit(self, cells: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        """The (part, group) cells that are tracked, new groups admitted in sorted order while their part has room."""
        allowed, new = set(), set()
        for part, group in cells:
            (allowed if group in self.tracked.get(part, ()) else new).add((part, group))
        for part, group in sorted(new):
            known = self.tracked.setdefault(part, set())
            if len(known) < self.limit and group not in self.untracked.get(part, ()):
                known.add(group)
                allowed.add((part, group))
            elif not self.warned:
                self.warned = True
                log.warning(
                    "monitor %s: part %s has more than metric.max_groups = %d groups; further groups are counted in each estimate's "
                    "untracked, not estimated", self.monitor, part, self.limit,
                )  # fmt: skip
        return allowed

    def miss(self, part: str, group: str, trials: int) -> None:
        """Count trials of a group beyond the budget (negative: a window let them go)."""
        groups = self.untracked.setdefault(part, {})
        groups[group] = groups.get(group, 0) + trials

    def report(self) -> dict[str, Any] | None:
        """Per part, how many groups are not tracked and how many trials they hold now; None while every group is tracked."""
        if not self.untracked:
            return None
        return {part: {"groups": len(groups), "trials": sum(groups.values())} for part, groups in sorted(self.untracked.items())}


def unlisted_total(totals: Mapping[str, float], name: str) -> str:
    """The total an unlisted group value's trials are added to: its own while fewer than `MAX_UNLISTED` values have one."""
    if not name.startswith(UNLISTED) or name in totals or sum(1 for known in totals if known.startswith(UNLISTED)) < MAX_UNLISTED:
        return name
    return UNLISTED + OTHER_VALUES


def unlisted_counts(totals: Mapping[str, float]) -> dict[str, int]:
    """Closed trials per group value outside the listed groups, from a monitor's totals."""
    return {name[len(UNLISTED) :]: round(value) for name, value in sorted(totals.items()) if name.startswith(UNLISTED) and value}


def unseen_groups(listed: Iterable[str], groups: TrackedGroups) -> list[str]:
    """The listed groups no trial was counted in, in any part (a hidden one included), in the spec's order."""
    seen = set().union(*groups.tracked.values(), *groups.untracked.values())
    return [group for group in listed if group not in seen]


def near_first(unseen: list[str], values: Mapping[str, int]) -> list[tuple[str, int]]:
    """The values seen outside the list with their trials, the closest spelling of an unseen group first.

    >>> near_first(["under25"], {"over_25": 700, "under_25": 300})
    [('under_25', 300), ('over_25', 700)]
    """

    def likeness(value: str) -> float:
        return max((difflib.SequenceMatcher(None, _plain(group), _plain(value)).ratio() for group in unseen), default=0.0)

    return sorted(values.items(), key=lambda item: (-likeness(item[0]), -item[1], item[0]))


def _plain(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def unseen_line(monitor: str, unseen: list[str], values: Mapping[str, int]) -> str:
    """The one line that names listed groups no trial carried and the values that were seen instead."""
    seen = ", ".join(f"{value!r} ({trials:,})" for value, trials in near_first(unseen, values)[:8]) or "none"
    more = f" and {len(values) - 8} more" if len(values) > 8 else ""
    return (
        f"monitor {monitor}: no trial was counted in listed group(s) {', '.join(map(repr, unseen))}; group values seen outside "
        f"metric.groups (trials): {seen}{more}; check the spelling in metric.groups"
    )
