"""Wealth from a log-wealth, capped so that a sum of wealths never overflows (pure, numpy-free)."""

from __future__ import annotations

import math

CEILING = 700.0
"""Log-wealths above this count as this: e^700 is far past any 1/α, and e^710 overflows a float."""


def wealth(log_wealth: float) -> float:
    """e to the log-wealth, with the log-wealth capped at CEILING."""
    return math.exp(min(log_wealth, CEILING))
