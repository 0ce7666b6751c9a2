"""P(A | B) for one group from counts, with the MAP prior of the RTLola fairness monitors."""

from __future__ import annotations

from dataclasses import dataclass

from fairstream.records.errors import InsufficientData


def map_estimate(hits: float, trials: float, prior: float, confidence: float) -> float:
    """`(S_AB + prior·κ) / (S_B + κ)`; with κ = 0 the plain ratio, undefined without trials."""
    denominator = trials + confidence
    if denominator <= 0:
        raise InsufficientData(f"no trials and no prior weight (κ = {confidence}); the rate is undefined")
    return (hits + prior * confidence) / denominator


@dataclass
class Rate:
    """Counts of one group's trials in the conditioning set B (`trials`) and of those where A held (`hits`).

    >>> rate = Rate()
    >>> for hit in (True, False, True, True):
    ...     rate.update(hit)
    >>> rate.get(prior=0.5, confidence=0)
    0.75
    >>> rate.get(prior=0.5, confidence=4)
    0.625
    """

    hits: int = 0
    trials: int = 0

    def update(self, hit: bool, weight: int = 1) -> None:
        self.hits += weight if hit else 0
        self.trials += weight

    def revert(self, hit: bool, weight: int = 1) -> None:
        self.update(hit, -weight)

    def get(self, prior: float, confidence: float) -> float:
        return map_estimate(self.hits, self.trials, prior, confidence)

    def __iadd__(self, other: Rate) -> Rate:
        self.hits += other.hits
        self.trials += other.trials
        return self
