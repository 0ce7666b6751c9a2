"""The fairness target (τ, S, L): burn-in, running target S and the stricter limit target L ⊆ S."""

from __future__ import annotations

from dataclasses import dataclass

from fairstream.shields.errors import ShieldError

BAD_BURN_IN = "burn-in τ must be an integer ≥ 1; got {burn_in!r}; F_t is only defined from t = 1"
BAD_RUNNING = "running target S = [s_lo, s_hi] needs s_lo < s_hi; got {running}; widen S"
BAD_LIMIT = "limit target L must be an interval inside S = {running}; got L = {limit}; L is the stricter target"


@dataclass(frozen=True)
class Target:
    """Running fairness `F_t ∈ S` for every t ≥ `burn_in`, and limit fairness `lim F_t ∈ L`.

    >>> Target(50, running=(0.4, 0.6), limit=(0.45, 0.55)).outside(0.39)
    True
    """

    burn_in: int
    running: tuple[float, float]
    limit: tuple[float, float]

    def __post_init__(self) -> None:
        if isinstance(self.burn_in, bool) or not isinstance(self.burn_in, int) or self.burn_in < 1:
            raise ShieldError(BAD_BURN_IN.format(burn_in=self.burn_in))
        s_lo, s_hi = self.running
        if not s_lo < s_hi:
            raise ShieldError(BAD_RUNNING.format(running=self.running))
        l_lo, l_hi = self.limit
        if not s_lo <= l_lo <= l_hi <= s_hi:
            raise ShieldError(BAD_LIMIT.format(running=self.running, limit=self.limit))

    def settled(self, margin: float) -> Target:
        """The same target with L shrunk by `margin` on each side (at most to 1 % of its width): a shield built for it
        places its limit point inside L rather than on L's edge, where about half of all finite streams end outside L."""
        low, high = self.limit
        inset = min(margin, (high - low) / 2 * 0.99)
        return Target(self.burn_in, self.running, (low + inset, high - inset))

    def outside(self, fairness: float) -> bool:
        """Whether a fairness value lies outside the running target S (S is closed)."""
        return fairness < self.running[0] or fairness > self.running[1]
