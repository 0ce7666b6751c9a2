"""What a shield did with one decision: the decision it let through, whether it flipped it, with what probability, and why."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.shields.errors import ShieldError

BAD_DRAW = "the uniform draw u must lie in [0, 1); got {u!r}; derive it from (seed, decision id)"


@dataclass(frozen=True)
class Verdict:
    """The shielded `decision`, `flipped` when it differs from the proposed one, the flip `probability` the shield used,
    the `cost` charged (the flip cost when flipped, else 0) and a human-readable `reason`.

    >>> Verdict.draw(1, probability=1.0, u=0.3, cost=0.25, reason="flipped: keeping leaves S")
    Verdict(decision=0, flipped=True, probability=1.0, cost=0.25, reason='flipped: keeping leaves S')
    """

    decision: int
    flipped: bool
    probability: float
    cost: float
    reason: str

    @classmethod
    def draw(cls, proposed: int, probability: float, u: float, cost: float, reason: str) -> Verdict:
        """Flip `proposed` when `u < probability`, so probability 0 never flips and 1 always does."""
        if not 0.0 <= u < 1.0:
            raise ShieldError(BAD_DRAW.format(u=u))
        flipped = u < probability
        return cls(1 - proposed if flipped else proposed, flipped, probability, cost if flipped else 0.0, reason)
