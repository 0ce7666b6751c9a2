"""Time to verdict: how many more trials per group an inconclusive part needs before its interval or confidence
sequence decides it, at the current rate estimates and the verdict's level (pure).

With raw rates p_h ≥ p_l over n_h and n_l trials, the gap's variance is V = p_h(1 − p_h)/n_h + p_l(1 − p_l)/n_l and
the distance to decide is δ = |gap − ε| (towards a violation when the gap exceeds ε, towards a certificate when it is
below). Growing both groups by one factor k keeps their ratio and divides V by k; the part is decided once
c·√(V/k) = δ, so k = c²V/δ², where c is z_{1−α/2} for a confident violation, z_{1−α} for a confident certificate (one
side of each of two one-sided tests), and for anytime verdicts √(2 ln(2/α)) and √(2 ln(1/α)), the log-wealth a
betting test must reach at its growth of δ²/(2V) per unit of k. An estimate at today's rates, not a promise.
"""

from __future__ import annotations

import math
from typing import Any

from fairstream.estimators.intervals import normal_quantile

TOWARD_VIOLATED, TOWARD_CERTIFIED = "violated", "certified"

MAX_TRIALS = 10**12
"""More trials than this per group is no estimate at all (a gap a hair from ε): reported as none, and kept within the
integers every JSON writer takes."""


def scale_to_decide(mode: str, gap: float, variance: float, epsilon: float, alpha_violation: float, alpha_certificate: float) -> tuple[str, float] | None:
    """(the verdict it heads for, the factor k by which every group's trials must grow), or None when no number of
    trials decides it (the gap sits at ε, or there is no spread to shrink).

    >>> direction, k = scale_to_decide("confident", 0.2, 0.0025, 0.1, 0.05, 0.05)
    >>> direction, round(k, 3)  # z = 1.96: 1.96² · 0.0025 / 0.1²
    ('violated', 0.96)
    """
    distance = abs(gap) - epsilon
    if distance == 0 or variance <= 0:
        return None
    toward = TOWARD_VIOLATED if distance > 0 else TOWARD_CERTIFIED
    if mode == "anytime":
        boundary = 2 * math.log(2 / alpha_violation) if distance > 0 else 2 * math.log(1 / alpha_certificate)
    else:
        z = normal_quantile(1 - alpha_violation / 2) if distance > 0 else normal_quantile(1 - alpha_certificate)
        boundary = z * z
    return toward, boundary * variance / distance**2


def trials_to_decide(body: dict[str, Any], mode: str, alpha_certificate: float) -> dict[str, Any] | None:
    """For an inconclusive part of rates (gaps, not ratios), the verdict it heads for and how many more trials each
    group of its named pair needs (at least 1), or None where it cannot be estimated (no pair, a suppressed cell, no
    level, or more than `MAX_TRIALS` needed)."""
    pair, alpha = body.get("pair"), body.get("alpha")
    if not pair or alpha is None:
        return None
    cells = [body["groups"].get(group) or {} for group in pair]
    if any(cell.get("rate") is None or not cell.get("trials") for cell in cells):
        return None
    rates, trials = [cell["rate"] for cell in cells], [cell["trials"] for cell in cells]
    variance = sum(p * (1 - p) / n for p, n in zip(rates, trials, strict=True))
    found = scale_to_decide(mode, rates[0] - rates[1], variance, body["threshold"], alpha, alpha_certificate)
    if found is None:
        return None
    toward, scale = found
    if not math.isfinite(scale) or max(trials) * scale > MAX_TRIALS:
        return None
    return {"toward": toward, "trials": {group: max(1, math.ceil(n * (scale - 1))) for group, n in zip(pair, trials, strict=True)}}
