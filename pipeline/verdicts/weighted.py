"""A rate whose trials carry weights (fairlearn's `sample_weight`): each group's rate is Σ w·hit / Σ w, and its evidence
counts Kish's effective trials n_eff = (Σw)² / Σw², the trials of equal weight that would estimate it as precisely;
the part is then judged as a rate of n_eff trials with rate · n_eff hits (pure)."""

from __future__ import annotations

from typing import Any

from fairstream.estimators.rate import Rate
from fairstream.verdicts.judge import PairLevel, VerdictRule
from fairstream.verdicts.parts import rate_part

WEIGHTED_HITS, WEIGHT, SQUARES, HITS, TRIALS = range(5)
"""Where each sum sits in a weighted cell: Σ w·hit, Σ w, Σ w², the hits and the trials counted."""


def effective(cell: list[float]) -> Rate:
    """The rate of Kish's effective trials: n_eff = (Σw)²/Σw², hits n_eff · Σw·hit/Σw (all weights 0: no trials)."""
    if cell[WEIGHT] <= 0 or cell[SQUARES] <= 0:
        return Rate(0, 0)
    trials = cell[WEIGHT] ** 2 / cell[SQUARES]
    hits = min(trials, max(0.0, trials * cell[WEIGHTED_HITS] / cell[WEIGHT]))  # rounding may put an all-hit cell a hair above
    return Rate(hits, trials)  # type: ignore[arg-type]


def weighted_part(
    cells: dict[str, list[float]], rule: VerdictRule, *, prior: float | None, confidence: float, interval: str, min_trials: int, level: PairLevel
) -> dict[str, Any]:
    """The part's record as `rate_part` makes it from the effective trials, each group's cell then showing the weighted
    rate exactly, the trials and hits counted, the weight and the effective trials."""
    total = [sum(cell[index] for cell in cells.values()) for index in range(TRIALS + 1)]
    others = None
    if rule.overall:  # each group's others: the total less its own sums, and their share of the total weight
        others = {group: (effective([whole - own for whole, own in zip(total, cell, strict=True)]), 1 - cell[WEIGHT] / total[WEIGHT] if total[WEIGHT] > 0 else 0.0)
                  for group, cell in cells.items()}  # fmt: skip
    body = rate_part(
        {group: effective(cell) for group, cell in cells.items()}, rule, prior=prior, confidence=confidence, interval=interval,
        min_trials=min_trials, level=level, overall=effective(total) if rule.overall else None, others=others,
    )  # fmt: skip
    for group, cell in cells.items():  # a group whose trials all weigh 0 has no rate, but its trials were counted
        if group not in body["groups"] and cell[TRIALS] > 0:
            body["groups"][group] = {"estimate": None, "rate": None, "below_floor": True}
    body["groups"] = dict(sorted(body["groups"].items()))
    for group, shown in body["groups"].items():
        _counted(shown, cells[group])
    if "overall" in body:
        _counted(body["overall"], total)
    return body


def _counted(shown: dict[str, Any], cell: list[float]) -> None:
    """A published cell with the weighted rate as Σw·hit/Σw, its counts whole and its weights beside them."""
    effective_trials = cell[WEIGHT] ** 2 / cell[SQUARES] if cell[SQUARES] > 0 else 0.0
    shown.update(
        rate=cell[WEIGHTED_HITS] / cell[WEIGHT] if cell[WEIGHT] > 0 else None, hits=round(cell[HITS]), trials=round(cell[TRIALS]),
        weight=cell[WEIGHT], effective_trials=effective_trials,
    )  # fmt: skip
