"""An anytime-valid alarm for a bounded stream whose mean leaves a range, at a level that holds over the whole run
(pure).

Null: every observation x_t ∈ [0, 1] has conditional mean in [low, high], whatever came before. A bettor who starts at
decision s and stakes λ on x exceeding `high` holds Π_{i ≥ s} (1 + λ (x_i − high)), a nonnegative supermartingale under
the null; a mirror bettor stakes on x falling below `low`. Starting one pair of bettors at every decision s with
weight w_s = 1/(s(s+1)) (Σ w_s = 1), over a grid of stakes λ, gives a mixture that starts at 1 and stays a
supermartingale, and it updates in O(grid) per observation: M_t = f_t (M_{t−1} + w_t). By Ville's inequality,
P(∃t: M_t ≥ 1/α) ≤ α — one false-warning level for the whole run, however long — while a change at decision s is
found after about (log(1/α) + 2 log s) / KL observations (an e-detector with a fixed false-alarm probability rather
than an average run length; Shin, Ramdas & Rinaldo 2023).
"""

from __future__ import annotations

from dataclasses import dataclass, field

STAKE_FRACTIONS = (1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4)
"""The stakes as fractions of the largest that keeps every factor positive: a shift δ from a rate p is best found at
λ ≈ δ / (p(1 − p)), which one of these comes within a factor of two of for shifts down to about 0.01."""

BAD_RANGE = "the range must satisfy 0 ≤ low ≤ high ≤ 1; got [{low}, {high}]"
BAD_LEVEL = "the false-warning level must lie in (0, 1); got {level}"
BAD_OBSERVATION = "observations must lie in [0, 1]; got {x!r}"


def _stakes(worst_loss: float) -> tuple[float, ...]:
    """Stakes on a payoff that can fall to −`worst_loss`: none when it cannot fall (that side of the range is the edge
    of [0, 1], and the null cannot be rejected there)."""
    if worst_loss <= 0:
        return ()
    return tuple(fraction / worst_loss for fraction in STAKE_FRACTIONS)


@dataclass
class RangeDetector:
    """Watches one stream of observations in [0, 1] against the range [low, high] of its mean, at `level`."""

    low: float
    high: float
    level: float
    seen: int = 0
    total: float = 0.0
    alarm_at: int | None = None
    """The observation at which the mean was found outside the range (sticky: the break happened)."""
    _up: list[float] = field(init=False, repr=False)
    _down: list[float] = field(init=False, repr=False)
    _up_stakes: tuple[float, ...] = field(init=False, repr=False)
    _down_stakes: tuple[float, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.low <= self.high <= 1:
            raise ValueError(BAD_RANGE.format(low=self.low, high=self.high))
        if not 0 < self.level < 1:
            raise ValueError(BAD_LEVEL.format(level=self.level))
        self._up_stakes, self._down_stakes = _stakes(self.high), _stakes(1 - self.low)
        self._up, self._down = [0.0] * len(self._up_stakes), [0.0] * len(self._down_stakes)

    @property
    def mean(self) -> float | None:
        """The mean of every observation so far (None before the first)."""
        return self.total / self.seen if self.seen else None

    @property
    def evidence(self) -> float:
        """The mixture's value now: the warning comes when it reaches 1/level."""
        stakes = len(self._up) + len(self._down)
        return (sum(self._up) + sum(self._down)) / stakes if stakes else 0.0

    @property
    def broken(self) -> bool:
        return self.alarm_at is not None

    def update(self, x: float) -> bool:
        """Take one observation; True on the observation that raises the alarm (once)."""
        if not 0 <= x <= 1:
            raise ValueError(BAD_OBSERVATION.format(x=x))
        self.seen += 1
        self.total += x
        if self.broken:
            return False
        weight = 1 / (self.seen * (self.seen + 1))
        for index, stake in enumerate(self._up_stakes):
            self._up[index] = (1 + stake * (x - self.high)) * (self._up[index] + weight)
        for index, stake in enumerate(self._down_stakes):
            self._down[index] = (1 + stake * (self.low - x)) * (self._down[index] + weight)
        if self.evidence >= 1 / self.level:
            self.alarm_at = self.seen
            return True
        return False
