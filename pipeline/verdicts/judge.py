"""Verdicts on one part of a metric: point (the estimated gap exceeds ε), confident (an interval lies beyond ε) or anytime (a betting test rejects), with hysteresis (pure)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from fairstream.estimators.betting import GapBet

Mode = Literal["point", "confident", "anytime"]
Interval = tuple[float, float]
Difference = Callable[[str, str, float], Interval]
"""(higher group, lower group, α) → interval of the difference of their rates at level 1 − α."""
GroupInterval = Callable[[str, float], Interval]
"""(group, α) → interval of the group's rate at level 1 − α."""


@dataclass(frozen=True)
class VerdictRule:
    """How a part is judged. `ratio` rules (disparate impact) compare min/max with the threshold instead of max − min."""

    mode: Mode = "point"
    threshold: float = 0.1
    alpha: float = 0.05
    hysteresis: float = 0.0
    ratio: bool = False
    pairs: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class PartVerdict:
    """The gap (or ratio) between the named pair, its interval when the mode gives one, and the verdict.

    `violated` says the property is violated now; `clear` says it holds with the hysteresis margin, so an
    ongoing violation may end. Both are None when fewer than two groups can be compared.
    """

    gap: float | None = None
    ratio: float | None = None
    pair: tuple[str, str] | None = None
    interval: Interval | None = None
    log_wealth: float | None = None
    violated: bool | None = None
    clear: bool | None = None


def compared_pairs(groups: list[str], pairs: tuple[tuple[str, str], ...] | None) -> list[tuple[str, str]]:
    """Every unordered pair of the eligible groups, or the listed pairs whose groups are both eligible."""
    eligible = set(groups)
    if pairs is None:
        return list(combinations(sorted(groups), 2))
    return [pair for pair in pairs if pair[0] in eligible and pair[1] in eligible]


def judge(
    rule: VerdictRule,
    estimates: dict[str, float],
    *,
    difference: Difference | None = None,
    group_interval: GroupInterval | None = None,
    bets: dict[tuple[str, str], GapBet] | None = None,
) -> PartVerdict:
    """Judge one part from its per-group estimates (and, per mode, intervals or betting tests)."""
    pairs = compared_pairs(list(estimates), rule.pairs)
    if not pairs:
        return PartVerdict()
    ordered = [(a, b) if estimates[a] >= estimates[b] else (b, a) for a, b in pairs]
    high, low = max(ordered, key=lambda pair: (estimates[pair[0]] - estimates[pair[1]], pair))
    gap = estimates[high] - estimates[low]
    ratio = _ratio(estimates[low], estimates[high])
    if rule.ratio:
        high, low = min(ordered, key=lambda pair: (_ratio(estimates[pair[1]], estimates[pair[0]]), pair))
        gap, ratio = estimates[high] - estimates[low], _ratio(estimates[low], estimates[high])
    base = dict(gap=gap, ratio=ratio, pair=(high, low))
    if rule.mode == "point":
        if rule.ratio:
            return PartVerdict(**base, violated=ratio < rule.threshold, clear=ratio >= rule.threshold + rule.hysteresis)
        return PartVerdict(**base, violated=gap > rule.threshold, clear=gap <= rule.threshold - rule.hysteresis)
    level = rule.alpha / len(ordered)  # Bonferroni over the compared pairs
    if rule.mode == "confident":
        if rule.ratio:
            assert group_interval is not None
            bounds = {pair: _ratio_upper(group_interval, pair, level / 2) for pair in ordered}
            worst = min(ordered, key=lambda pair: (bounds[pair], pair))
            return PartVerdict(
                gap=estimates[worst[0]] - estimates[worst[1]], ratio=_ratio(estimates[worst[1]], estimates[worst[0]]), pair=worst,
                interval=(0.0, bounds[worst]),
                violated=bounds[worst] < rule.threshold, clear=bounds[worst] >= rule.threshold + rule.hysteresis,
            )  # fmt: skip
        assert difference is not None
        intervals = {pair: difference(pair[0], pair[1], level) for pair in ordered}
        strongest = max(ordered, key=lambda pair: (intervals[pair][0], pair))
        lower = intervals[strongest][0]
        return PartVerdict(
            gap=estimates[strongest[0]] - estimates[strongest[1]], ratio=_ratio(estimates[strongest[1]], estimates[strongest[0]]),
            pair=strongest, interval=intervals[strongest],
            violated=lower > rule.threshold, clear=lower <= rule.threshold - rule.hysteresis,
        )  # fmt: skip
    assert bets is not None
    strongest: tuple[float, tuple[str, str], bool] | None = None
    for a, b in pairs:
        bet = bets.get((a, b))
        if bet is None:
            continue
        side = bet.rejects(level)
        for log_wealth, pair, name in zip(bet.get(), ((a, b), (b, a)), ("a>b", "b>a")):
            candidate = (log_wealth, pair, side == name)
            if strongest is None or (candidate[2], candidate[0]) > (strongest[2], strongest[0]):
                strongest = candidate
    if strongest is None:
        return PartVerdict(**base)
    log_wealth, (high, low), rejected = strongest
    # a betting test that has rejected has rejected for good: a violation found this way never clears.
    # Until then the record names the widest gap; after, the pair the test rejected for.
    if not rejected:
        return PartVerdict(**base, log_wealth=log_wealth, violated=False, clear=False)
    return PartVerdict(
        gap=estimates[high] - estimates[low], ratio=_ratio(estimates[low], estimates[high]), pair=(high, low),
        log_wealth=log_wealth, violated=True, clear=False,
    )  # fmt: skip


def _ratio(low: float, high: float) -> float:
    return low / high if high > 0 else 1.0


def _ratio_upper(group_interval: GroupInterval, pair: tuple[str, str], alpha: float) -> float:
    """An upper bound on rate(low)/rate(high): the upper bound of the lower group over the lower bound of the higher one."""
    high_low, _ = group_interval(pair[0], alpha)
    _, low_high = group_interval(pair[1], alpha)
    return min(1.0, low_high / high_low) if high_low > 0 else 1.0
