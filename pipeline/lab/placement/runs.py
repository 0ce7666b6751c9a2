"""Streams through the runtime shield of a spec, counting what it flipped beside the hindsight oracle's fewest flips to
the same end spread, and how often the shielded gap left S after the burn-in: the stated bound rechecked on the same
streams (lab, seeded)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairstream.lab.changes.records import Coverage
from fairstream.lab.placement.hindsight import fewest_flips
from fairstream.language.models import ShieldSpec
from fairstream.shields.runtime.configured import configure


@dataclass(frozen=True)
class Setting:
    """A decision maker and its shield's target: raw rates and shares per group."""

    name: str
    rates: tuple[float, ...]
    shares: tuple[float, ...]
    running: tuple[float, float]
    limit: tuple[float, float]
    burn_in: int
    horizon: int
    lam: float = 0.05

    def spec(self) -> ShieldSpec:
        groups = [f"g{index}" for index in range(len(self.rates))]
        sharing = {"share": self.shares[0]} if len(groups) == 2 else {"shares": list(self.shares)}
        return ShieldSpec(
            decisions="DECISION", group="group", decision="decision", groups=groups, rates=list(self.rates), running=self.running, limit=self.limit,
            burn_in=self.burn_in, horizon=self.horizon, max_violation=self.lam, **sharing,
        )  # fmt: skip


SETTINGS = (
    Setting("two groups, shares 0.1/0.9", (0.6, 0.3), (0.1, 0.9), (-0.1, 0.1), (-0.05, 0.05), 500, 2000),
    Setting("two groups, shares 0.5/0.5", (0.6, 0.3), (0.5, 0.5), (-0.1, 0.1), (-0.05, 0.05), 500, 2000),
    Setting("three groups, shares 0.5/0.3/0.2", (0.9, 0.5, 0.1), (0.5, 0.3, 0.2), (0.0, 0.3), (0.0, 0.15), 500, 2000),
)


@dataclass(frozen=True)
class Placement:
    """Per stream: decisions flipped, the oracle's fewest flips to the same end spread, and whether the gap left S."""

    setting: Setting
    alpha: float
    flips: tuple[int, ...]
    fewest: tuple[int, ...]
    left: tuple[bool, ...]

    @property
    def ratio(self) -> float:
        """Flips over the oracle's, totalled over the streams."""
        return sum(self.flips) / max(sum(self.fewest), 1)

    @property
    def left_share(self) -> tuple[float, tuple[float, float]]:
        """The share of streams that left S after the burn-in, with its exact 95 % interval."""
        hits = sum(self.left)
        return hits / len(self.left), Coverage.interval(hits, len(self.left))


def measure(setting: Setting, runs: int, seed: int = 0) -> Placement:
    """`runs` streams of `setting.horizon` decisions through the spec's runtime shield."""
    shield = configure(setting.spec()).shield
    groups = setting.spec().groups
    rng = np.random.default_rng(seed)
    flips, fewest, left = [], [], []
    for _ in range(runs):
        arrivals = rng.choice(len(groups), size=setting.horizon, p=setting.shares)
        raws = rng.random(setting.horizon) < np.asarray(setting.rates)[arrivals]
        draws = rng.random(setting.horizon)
        state, flipped, outside = shield.start(), 0, False
        seen, ones, shielded_ones = [0] * len(groups), [0] * len(groups), [0] * len(groups)
        for index, raw, u in zip(arrivals.tolist(), raws.tolist(), draws.tolist()):
            verdict = shield.decide(int(raw), state, u, groups[index])  # type: ignore[arg-type]
            state = shield.next_state(state, verdict)  # type: ignore[arg-type]
            flipped += verdict.flipped
            outside |= verdict.violation
            seen[index] += 1
            ones[index] += raw
            shielded_ones[index] += verdict.shielded
        rates = [k / n for n, k in zip(seen, shielded_ones) if n]
        flips.append(flipped)
        fewest.append(fewest_flips(seen, ones, max(rates) - min(rates)))
        left.append(outside)
    return Placement(setting, shield_alpha(shield), tuple(flips), tuple(fewest), tuple(left))


def shield_alpha(shield) -> float:
    """The steepness of the shield's member."""
    return float(shield.energy.alpha)
