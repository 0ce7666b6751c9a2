"""Twelve groups, 66 pairs, a decision a minute: how soon the merged alarm of a monitor rises beside the first of its
per-pair tests, and how often either rises when every pair is within the threshold (lab, seeded; streams run in
parallel processes).

Each decision is one group's, drawn evenly; it is approved with the group's rate. The outcomes feed the monitor's own
anytime evidence (`AnytimeEvidence.feed`), with every pair tested at α/66 and the merged alarm at α.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import combinations

import numpy as np

from fairstream.verdicts.anytime import AnytimeEvidence
from fairstream.verdicts.budget import MonitorBudget
from fairstream.verdicts.many_pairs.merged import MergedEvidence

GROUPS = tuple(f"g{index:02d}" for index in range(12))
PAIRS = len(GROUPS) * (len(GROUPS) - 1) // 2
EPSILON = 0.1
ALPHA = 0.05
BEYOND = 0.05
"""How far beyond ε a drifting pair's gap lies."""
PART = "selection_rate"


def rates(scenario: str) -> dict[str, float]:
    """Each group's rate: `still`, half the groups ε apart (36 pairs at the threshold, 30 at 0); `one`, one pair
    ε + 0.05 apart and every other pair within ε; `many`, half the groups ε + 0.05 apart (36 pairs beyond it)."""
    half = len(GROUPS) // 2
    if scenario == "one":
        return {group: 0.5 + (EPSILON + BEYOND) / 2 * (index == 0) - (EPSILON + BEYOND) / 2 * (index == 1) for index, group in enumerate(GROUPS)}
    apart = {"still": EPSILON, "many": EPSILON + BEYOND}[scenario]
    return {group: 0.5 + apart / 2 * (1 if index < half else -1) for index, group in enumerate(GROUPS)}


def drifting(scenario: str) -> int:
    """How many pairs lie beyond ε."""
    rate = rates(scenario)
    return sum(abs(rate[a] - rate[b]) > EPSILON + 1e-9 for a, b in combinations(GROUPS, 2))


@dataclass(frozen=True)
class Alarms:
    """One stream: the decision at which the first per-pair test and the merged alarm rose (None: not by the end)."""

    first_pair: int | None
    merged: int | None
    carriers: int
    """Pairs the merged alarm's record names."""


def stream(seed: int, *, scenario: str, decisions: int) -> Alarms:
    """Feed one stream to a monitor's anytime evidence; stop once both alarms have risen."""
    rng = np.random.default_rng(seed)
    rate = rates(scenario)
    chosen = rng.integers(0, len(GROUPS), decisions)
    draws = rng.random(decisions)
    evidence = AnytimeEvidence(EPSILON, measures=False)
    evidence.merged = MergedEvidence(ALPHA, MonitorBudget(1.0, "monitor", 1, PAIRS))
    level = ALPHA / PAIRS
    first_pair = merged = None
    carriers = 0
    for index in range(decisions):
        group = GROUPS[chosen[index]]
        evidence.feed(PART, group, float(draws[index] < rate[group]))
        if first_pair is None and any(bet.rejects(level) for pair, bet in evidence.bets_of(PART).items() if group in pair):
            first_pair = index
        if merged is None and evidence.merged.raised:
            merged, carriers = index, len(evidence.merged.carriers())
        if first_pair is not None and merged is not None:
            break
    return Alarms(first_pair, merged, carriers)


def streams(runs: int, scenario: str, decisions: int, seed: int = 0) -> list[Alarms]:
    """`runs` streams of at most `decisions` decisions."""
    one = partial(stream, scenario=scenario, decisions=decisions)
    with ProcessPoolExecutor(max_workers=min(os.cpu_count() or 1, 8)) as pool:
        return list(pool.map(one, range(seed, seed + runs), chunksize=1))


def median(times: list[int | None]) -> float:
    """The median decisions to an alarm, a stream without one counting as endless."""
    return float(np.median([math.inf if time is None else time for time in times]))


def risen(times: list[int | None]) -> int:
    return sum(time is not None for time in times)
