"""The input distribution θ a FinHzn shield is synthesized for: the probability that the next candidate belongs to group
g, is proposed decision r, and costs c to flip.

The fairness-shield paper assumes θ known and the same at every step, candidates independent. Here θ is either given
(`ArrivalModel.bernoulli`: group a with probability π, proposed acceptance with probability p_g, one constant cost) or
estimated from a sample of past decisions (`ArrivalModel.estimate`: the empirical frequencies of (g, r) and, when flip
costs are given, of their binned levels; by default ten levels (i − ½)/20 of |s − 0.5|, as in the authors' code). The
shield's guarantee does not rest on θ (every run ends fair, however groups and decisions arrive); only the expected
cost it minimizes does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from fairstream.lab.periodic.baseline import check_decision, check_groups, is_first
from fairstream.shields.errors import ShieldError

BAD_COSTS = "cost levels must be finite numbers ≥ 0, at least one; got {costs!r}"
BAD_SHAPE = "weights need 4 rows, (a,0) (a,1) (b,0) (b,1), of one entry per cost level ({levels}); got {weights!r}"
BAD_WEIGHTS = "weights must be ≥ 0 and sum to 1; got sum {total!r} and minimum {least!r}; hint: normalize the frequencies"
BAD_PROBABILITY = "{name} must be a probability in [0, 1]; got {value!r}"
BAD_SAMPLE = "groups, decisions and costs must be non-empty and of one length; got lengths {lengths}"
BAD_LEVELS = "levels must be an integer ≥ 1 and top a number > 0; got levels={levels!r}, top={top!r}"
BAD_SCORE = "a score must lie in [0, 1]; got {score!r}; scores are probabilities of acceptance"


def confidence_cost(score: float) -> float:
    """The cost of flipping a decision made with score s: |s − 0.5|, so confident decisions are dear and close calls cheap.

    >>> confidence_cost(0.9), confidence_cost(0.5)
    (0.4, 0.0)
    """
    if not 0 <= score <= 1:
        raise ShieldError(BAD_SCORE.format(score=score))
    return abs(score - 0.5)


def _probability(name: str, value: float) -> float:
    if not 0 <= value <= 1:
        raise ShieldError(BAD_PROBABILITY.format(name=name, value=value))
    return float(value)


@dataclass(frozen=True)
class ArrivalModel:
    """θ as a table: `weights[row][level]` is the probability of a candidate in row (a,0), (a,1), (b,0), (b,1), i.e. group
    a or b and proposed decision, whose flip costs `costs[level]`.

    >>> ArrivalModel.bernoulli(share_a=0.5, accept_a=0.75, accept_b=0.25)
    ArrivalModel(costs=(1.0,), weights=((0.125,), (0.375,), (0.375,), (0.125,)))
    """

    costs: tuple[float, ...]
    weights: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        if not self.costs or any(not (math.isfinite(cost) and cost >= 0) for cost in self.costs):
            raise ShieldError(BAD_COSTS.format(costs=self.costs))
        if len(self.weights) != 4 or any(len(row) != len(self.costs) for row in self.weights):
            raise ShieldError(BAD_SHAPE.format(levels=len(self.costs), weights=self.weights))
        total = math.fsum(w for row in self.weights for w in row)
        least = min(w for row in self.weights for w in row)
        if least < 0 or not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ShieldError(BAD_WEIGHTS.format(total=total, least=least))

    @classmethod
    def bernoulli(cls, share_a: float, accept_a: float, accept_b: float, cost: float = 1.0) -> ArrivalModel:
        """Group a with probability `share_a`; proposed acceptance with probability `accept_g`; every flip costs `cost`."""
        pi, p_a, p_b = (_probability(n, v) for n, v in (("share_a", share_a), ("accept_a", accept_a), ("accept_b", accept_b)))
        rows = (pi * (1 - p_a), pi * p_a, (1 - pi) * (1 - p_b), (1 - pi) * p_b)
        return cls((float(cost),), tuple((w,) for w in rows))

    @classmethod
    def estimate(
        cls,
        groups: Iterable[str],
        decisions: Iterable[int],
        costs: Iterable[float] | None = None,
        pair: tuple[str, str] = ("a", "b"),
        levels: int = 10,
        top: float = 0.5,
    ) -> ArrivalModel:
        """Empirical θ from a sample whose groups are named by `pair` (group a, group b). Without `costs`, one
        constant cost of 1; with them (e.g. `confidence_cost` of each score), costs binned into `levels` equal bins over
        [0, `top`] (larger ones join the last), each at its midpoint.

        >>> ArrivalModel.estimate(["a", "a", "b", "b"], [1, 1, 0, 1], costs=[0.42, 0.1, 0.0, 0.3], levels=2)
        ArrivalModel(costs=(0.125, 0.375), weights=((0.0, 0.0), (0.25, 0.25), (0.25, 0.0), (0.0, 0.25)))
        """
        groups, decisions = list(groups), list(decisions)
        costs = None if costs is None else list(costs)
        lengths = (len(groups), len(decisions)) + (() if costs is None else (len(costs),))
        if not groups or len(set(lengths)) != 1:
            raise ShieldError(BAD_SAMPLE.format(lengths=lengths))
        if isinstance(levels, bool) or not isinstance(levels, int) or levels < 1 or not top > 0:
            raise ShieldError(BAD_LEVELS.format(levels=levels, top=top))
        check_groups(pair)
        rows = np.array([2 * (not is_first(pair, g)) + check_decision(r) for g, r in zip(groups, decisions, strict=True)])
        if costs is None:
            return cls((1.0,), tuple((float(w),) for w in np.bincount(rows, minlength=4) / len(rows)))
        values = np.array(costs, dtype=float)
        if not np.all(np.isfinite(values) & (values >= 0)):
            raise ShieldError(BAD_COSTS.format(costs=costs))
        width = top / levels
        bins = np.minimum((values / width).astype(int), levels - 1)
        counts = np.zeros((4, levels))
        np.add.at(counts, (rows, bins), 1)
        table = counts / len(rows)
        return cls(tuple(float((i + 0.5) * width) for i in range(levels)), tuple(tuple(float(w) for w in row) for row in table))

    def array(self) -> np.ndarray:
        """The weights as a 4 × levels array."""
        return np.array(self.weights, dtype=float)
