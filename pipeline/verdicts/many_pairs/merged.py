"""One alarm across every pair of a monitor: the pairs' violation e-processes and each part's pooled test merged into
one e-process M, read after every outcome (pure).

Half of M is the average of the pairs' violation wealths K (a ahead of b, and b ahead of a), each pair weighed by its
share w of the whole: an average of e-values is an e-value under any dependence (Vovk & Wang 2021), so pairs that share
a group need no independence, and one pair drifting alone raises the alarm when its wealth reaches 4/(wα), a factor 2
past its own test. The other half is each part's pooled test (`fairstream.verdicts.many_pairs.pooled`), weighed by
the part's share: when many pairs drift together it grows far faster than any one pair (Bharti, Pal & Sulam, arXiv
2602.21479).
The alarm is raised when M reaches 1/α; by Ville's inequality P(alarm | every pair within its threshold) ≤ α, read at
every outcome, where the pairs' wealths are supermartingales in one filtration (each is in its own; measured in
`fairstream bench alarms`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from fairstream.verdicts.budget import MonitorBudget
from fairstream.verdicts.many_pairs.pooled import PooledBet
from fairstream.verdicts.many_pairs.wealth import wealth

RESUM = 4096
"""Updates between exact re-summations of the running total (each update adds a difference)."""

Key = tuple[str, str, str]
"""(part, a, b)."""


@dataclass
class MergedEvidence:
    """M (see the module), and whether it has reached 1/α (and its record been written)."""

    alpha: float
    shares: MonitorBudget
    """Each part's and pair's share of the whole (a budget of 1): equal over declared ones, else 6/(π²j²) in the order
    they start."""
    listed: frozenset[tuple[str, str]] | None = None
    """The pairs the spec lists (either order), where it does: no other pair enters M."""
    terms: dict[Key, float] = field(default_factory=dict)
    wealths: dict[Key, tuple[float, float]] = field(default_factory=dict)
    pooled: dict[str, PooledBet] = field(default_factory=dict)
    pooled_terms: dict[str, float] = field(default_factory=dict)
    total: float = 0.0
    raised: bool = False
    reported: bool = False
    updates: int = 0

    def tests(self, key: Key) -> bool:
        """Whether the pair (part, a, b) enters M."""
        return self.listed is None or (key[1], key[2]) in self.listed or (key[2], key[1]) in self.listed

    def pair_started(self, key: Key, rows) -> None:
        """A pair's test started: its part's pooled test takes it from the next round on."""
        part, a, b = key
        if self.tests(key):
            self.pooled.setdefault(part, PooledBet()).add_pair((a, b), rows)

    def outcome(self, part: str, group: str, value: float) -> None:
        """One outcome for the part's pooled test; M follows where it completed a round."""
        pooled = self.pooled.get(part)
        if pooled is not None and pooled.push(group, value):
            self._set(self.pooled_terms, part, self.shares.part_alpha(part) * wealth(pooled.log_wealth) / 2)

    def update(self, key: Key, log_wealths: tuple[float, float]) -> None:
        """A pair's bettors settled a pair of outcomes: their log-wealths now (a ahead of b, b ahead of a)."""
        part, a, b = key
        if not self.tests(key):
            return
        self.wealths[key] = log_wealths
        self._set(self.terms, key, self.shares.pair_alpha(part, (a, b)) * (wealth(log_wealths[0]) + wealth(log_wealths[1])) / 4)

    def _set(self, terms: dict, key, term: float) -> None:
        self.total += term - terms.get(key, 0.0)
        terms[key] = term
        self.updates += 1
        if self.updates % RESUM == 0:
            self.total = math.fsum(self.terms.values()) + math.fsum(self.pooled_terms.values())
        self.raised = self.raised or self.total >= 1 / self.alpha

    @property
    def log_evidence(self) -> float:
        return math.log(self.total) if self.total > 0 else -math.inf

    def carriers(self) -> list[tuple[Key, float]]:
        """The fewest pairs whose own terms make up half of theirs, largest first, with the fraction of M each carries."""
        named, carried, half = [], 0.0, math.fsum(self.terms.values()) / 2
        for key, term in sorted(self.terms.items(), key=lambda item: (-item[1], item[0])):
            if carried >= half:
                break
            named.append((key, term / self.total))
            carried += term
        return named

    def body(self) -> dict[str, Any]:
        """What a global alarm record says: the level, the evidence, the pairs that carry it and what each part's pooled
        test carries and leans on."""
        return {
            "alpha": self.alpha,
            "log_evidence": self.log_evidence,
            "log_threshold": math.log(1 / self.alpha),
            "pairs_tested": len(self.terms),
            "carriers": [
                {"part": part, "pair": [a, b], "share_of_evidence": share, "log_wealth": max(self.wealths[(part, a, b)])}
                for (part, a, b), share in self.carriers()
            ],
            "pooled": [
                {
                    "part": part, "share_of_evidence": self.pooled_terms.get(part, 0.0) / self.total, "log_wealth": pooled.log_wealth,
                    "rounds": pooled.rounds, "leaning_on": [{"pair": list(pair), "stake": stake} for pair, stake in pooled.leaders()],
                }
                for part, pooled in sorted(self.pooled.items())
            ],
        }  # fmt: skip
