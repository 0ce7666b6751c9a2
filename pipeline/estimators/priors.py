"""The prior mean and κ in force for a part now: the spec's or the part's own, a constant or an expression over the
stream's aggregates (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from fairstream.language.expressions import Expression

PartEstimators = Mapping[str, tuple[float | Expression | None, float | None]]


def prior_now(prior: float | Expression | None, totals: Mapping[str, float]) -> float | None:
    """A prior mean now: the constant, or the expression over the aggregates clamped to [0, 1] (None while undefined).

    >>> prior_now(0.3, {})
    0.3
    """
    if isinstance(prior, Expression):
        value = prior.evaluate(totals)
        return None if value is None else min(1.0, max(0.0, float(value)))
    return prior


def part_estimator(
    parts: PartEstimators, part: str, prior: float | None, confidence: float, totals: Mapping[str, float]
) -> tuple[float | None, float]:
    """The prior mean and κ of a part: its own (`estimator.parts`, by full name or by the name before a stratum's
    brackets) where the spec gives them, else the spec's (`prior`, already evaluated, and `confidence`)."""
    own = parts.get(part) or parts.get(part.split("[", 1)[0])
    if own is None:
        return prior, confidence
    own_prior, own_confidence = own
    return (prior if own_prior is None else prior_now(own_prior, totals)), (confidence if own_confidence is None else own_confidence)
