"""A budget of groups per part: the first `limit` groups of a part are tracked (estimated, judged, published); the
trials of any further group are counted, not tracked, so no input can grow a record or the merge's state without
bound (pure)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("fairstream.monitor")


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
