"""Verdicts on one part of a metric: point (the estimated gap exceeds ε), confident (an interval of the raw gap lies
beyond ε) or anytime (a betting test rejects), each pair at the level its error budget gave it, with hysteresis (pure)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from fairstream.estimators.betting import GapBet


Mode = Literal["point", "confident", "anytime"]
OVERALL = "(overall)"
"""The name the overall rate of a part goes by where groups are compared with it (`compare: overall`)."""
Interval = tuple[float, float]
Difference = Callable[[str, str, float], Interval]
"""(higher group, lower group, α) → interval of the difference of their rates at level 1 − α."""
GroupInterval = Callable[[str, float], Interval]
"""(group, α) → interval of the group's rate at level 1 − α."""
RatioInterval = Callable[[str, str, float], Interval]
"""(higher group, lower group, α) → interval of rate(lower) / rate(higher) at level 1 − α."""
PairLevel = Callable[[tuple[str, str]], float]
"""(a, b) → the α the pair is tested at (its share of the monitor's budget)."""


@dataclass(frozen=True)
class VerdictRule:
    """How a part is judged. `ratio` rules (disparate impact) compare min/max with the threshold instead of max − min."""

    mode: Mode = "point"
    threshold: float = 0.1
    alpha: float = 0.05
    hysteresis: float = 0.0
    ratio: bool = False
    pairs: tuple[tuple[str, str], ...] | None = None
    overall: bool = False
    """Each group is compared with the part's overall rate (`OVERALL`), not with the other groups."""


@dataclass(frozen=True)
class PartVerdict:
    """The gap (or ratio) of the point estimates between the named pair, the raw gap (or ratio) its interval is for when
    the mode gives one, the pair's level, and the verdict.

    `violated` says the property is violated now; `clear` says it holds with the hysteresis margin, so an
    ongoing violation may end. Both are None when fewer than two groups can be compared. `certified` says the evidence
    puts every compared pair inside the threshold at the rule's α (None under point verdicts, which weigh no evidence).
    """

    gap: float | None = None
    ratio: float | None = None
    pair: tuple[str, str] | None = None
    raw_gap: float | None = None
    raw_ratio: float | None = None
    interval: Interval | None = None
    alpha: float | None = None
    log_wealth: float | None = None
    violated: bool | None = None
    clear: bool | None = None
    certified: bool | None = None
    log_wealth_within: float | None = None


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
    raw: dict[str, float] | None = None,
    level: PairLevel | None = None,
    difference: Difference | None = None,
    group_interval: GroupInterval | None = None,
    ratio: RatioInterval | None = None,
    bets: dict[tuple[str, str], GapBet] | None = None,
    complete: bool = True,
) -> PartVerdict:
    """Judge one part from its per-group point estimates and, per mode, the raw rates, intervals or betting tests.

    Confident verdicts rest on the raw rates (`raw`, the point estimates where not given): pairs are ordered by them and
    their intervals are of the raw gap, whatever prior the point estimates carry. `level` gives each pair's α; by
    default the rule's α is split evenly over the pairs compared now. `complete` says every group of the part is in
    `estimates` (none below the evidence floor): only then can the part be certified.
    """
    if rule.mode == "point":
        return point_verdict(rule, widest_pair(rule, estimates, raw))
    pairs = compared_pairs(list(estimates), rule.pairs)
    if not pairs:
        return PartVerdict(certified=False)
    raw = raw if raw is not None else estimates
    level = level or (lambda _pair: rule.alpha / len(pairs))  # type: ignore[arg-type]
    if rule.mode == "confident":
        assert pairs is not None
        verdict = _confident(rule, estimates, raw, pairs, level, difference, ratio)
        if rule.ratio:  # the interval named is the one whose lower end is lowest: certified exactly when it is at τ or above
            return replace(verdict, certified=complete and not verdict.violated and verdict.interval[0] >= rule.threshold)  # type: ignore[index]
        certified = complete and not verdict.violated and _certified_by_intervals(rule, raw, pairs, difference)
        return replace(verdict, certified=certified)
    assert bets is not None
    named = _widest(rule, estimates, pairs)
    if rule.ratio and all(pair in bets for pair in pairs):  # the pair whose interval's lower end is lowest: what certification rests on
        named = min(pairs, key=lambda pair: (either_way(*bets[pair].bounds(level(pair)))[0], pair))
        named = named if estimates[named[0]] >= estimates[named[1]] else (named[1], named[0])
    base = _describe(named, estimates, raw)
    within = min((bets[pair].certification() if pair in bets else 0.0) for pair in pairs)
    # a ratio part is certified from the interval its record publishes (each pair at its level); a gap part from its
    # certification bettors at the rule's α (an intersection–union test)
    certified = complete and all(pair in bets and bets[pair].certifies(level(pair) if rule.ratio else rule.alpha) for pair in pairs)
    strongest: tuple[bool, float, tuple[str, str], float] | None = None
    for a, b in pairs:
        bet = bets.get((a, b))
        if bet is None:
            continue
        alpha = level((a, b))
        side = bet.rejects(alpha)
        for log_wealth, pair, name in zip(bet.get(), ((a, b), (b, a)), ("a>b", "b>a")):
            candidate = (side == name, log_wealth, pair, alpha)
            if strongest is None or candidate[:2] > strongest[:2]:
                strongest = candidate
    if strongest is None:
        return PartVerdict(**base, certified=False, log_wealth_within=within)
    rejected, log_wealth, pair, alpha = strongest
    # a betting test that has rejected has rejected for good (see `GapBet.rejects`): a violation found this way never
    # clears. Until then the record names the widest gap; after, the pair the test rejected for.
    evidence = {"alpha": alpha, "log_wealth": log_wealth, "clear": False, "log_wealth_within": within}
    if not rejected:
        return PartVerdict(**base, **evidence, violated=False, certified=certified)
    return PartVerdict(**_describe(pair, estimates, raw), **evidence, violated=True, certified=False)


def _confident(
    rule: VerdictRule,
    estimates: dict[str, float],
    raw: dict[str, float],
    pairs: list[tuple[str, str]],
    level: PairLevel,
    difference: Difference | None,
    ratio: RatioInterval | None,
) -> PartVerdict:
    """The pair whose interval lies furthest beyond the threshold: a violation when its interval is wholly beyond it.
    A ratio part names, while not violated, the pair whose interval's lower end is lowest (what certification rests on)."""
    ordered = [(a, b) if raw[a] >= raw[b] else (b, a) for a, b in pairs]
    if rule.ratio:
        assert ratio is not None
        intervals = {pair: either_way(*ratio(pair[0], pair[1], level(pair))) for pair in ordered}
        worst = min(ordered, key=lambda pair: (intervals[pair][1], pair))
        violated = intervals[worst][1] < rule.threshold
        named = worst if violated else min(ordered, key=lambda pair: (intervals[pair][0], pair))
        return PartVerdict(
            **_describe(named, estimates, raw), interval=intervals[named], alpha=level(named),
            violated=violated, clear=intervals[worst][1] >= rule.threshold + rule.hysteresis,
        )  # fmt: skip
    assert difference is not None
    # an interval reaches beyond the recovery band only if its centre does (the raw gap; the posterior's, for credible
    # intervals, is the point gap), so only those pairs, and the widest one for the record, are computed
    band = rule.threshold - rule.hysteresis
    widest = max(ordered, key=lambda pair: (raw[pair[0]] - raw[pair[1]], pair))
    candidates = [
        pair for pair in ordered
        if pair == widest or max(abs(estimates[pair[0]] - estimates[pair[1]]), raw[pair[0]] - raw[pair[1]]) > band
    ]  # fmt: skip
    intervals = {pair: difference(pair[0], pair[1], level(pair)) for pair in candidates}
    strongest = max(candidates, key=lambda pair: (intervals[pair][0], pair))
    lower = intervals[strongest][0]
    return PartVerdict(
        **_describe(strongest, estimates, raw), interval=intervals[strongest], alpha=level(strongest),
        violated=lower > rule.threshold, clear=lower <= band,
    )  # fmt: skip


def _certified_by_intervals(rule: VerdictRule, raw: dict[str, float], pairs: list[tuple[str, str]], difference: Difference | None) -> bool:
    """Whether every pair's interval lies inside the threshold: |gap| < ε at the rule's α for each pair,
    by two one-sided tests (a 1 − 2α interval) joined as an intersection–union test, so no pair takes a share of α.
    The widest pairs are tried first, and the first that fails settles it."""
    ordered = sorted(((a, b) if raw[a] >= raw[b] else (b, a) for a, b in pairs), key=lambda pair: raw[pair[1]] - raw[pair[0]])
    two_sided = min(2 * rule.alpha, 0.999)
    assert difference is not None
    for high, low in ordered:
        lower, upper = difference(high, low, two_sided)
        if not (-rule.threshold < lower and upper < rule.threshold):
            return False
    return True


def widest_pair(rule: VerdictRule, estimates: dict[str, float], raw: dict[str, float] | None = None) -> dict[str, Any] | None:
    """What a point verdict compares with the threshold: the pair of the largest gap (smallest ratio) among every pair
    of the groups or the rule's listed pairs, with its gap and ratio of the point estimates and of the raw rates; None
    where no pair is estimated. It depends on the rule's pairs and ratio alone, not on its threshold."""
    if rule.pairs is None:  # every pair of the groups: found from the highest and the lowest
        if len(estimates) < 2:
            return None
        pairs = None
    else:
        pairs = compared_pairs(list(estimates), rule.pairs)
        if not pairs:
            return None
    return _describe(_widest(rule, estimates, pairs), estimates, raw if raw is not None else estimates)


def point_verdict(rule: VerdictRule, widest: dict[str, Any] | None) -> PartVerdict:
    """The point verdict on a part's widest pair (`widest_pair`)."""
    if widest is None:
        return PartVerdict()
    violated, clear = point_outcome(rule, widest)
    return PartVerdict(**widest, violated=violated, clear=clear)


def point_outcome(rule: VerdictRule, widest: dict[str, Any]) -> tuple[bool, bool]:
    """Whether the widest pair violates the threshold, and whether it is clear of it by the hysteresis."""
    if rule.ratio:
        return widest["ratio"] < rule.threshold, widest["ratio"] >= rule.threshold + rule.hysteresis
    return widest["gap"] > rule.threshold, widest["gap"] <= rule.threshold - rule.hysteresis


def _widest(rule: VerdictRule, estimates: dict[str, float], pairs: list[tuple[str, str]] | None) -> tuple[str, str]:
    """The pair of the largest gap of the point estimates (the smallest ratio, for ratio rules), higher group first;
    `pairs` None: every pair of the groups."""
    if rule.pairs is None and not rule.ratio:
        extremes = _extremes(estimates)
        if extremes is not None:
            return extremes
    if pairs is None:
        pairs = compared_pairs(list(estimates), None)
    ordered = [(a, b) if estimates[a] >= estimates[b] else (b, a) for a, b in pairs]
    if rule.ratio:
        return min(ordered, key=lambda pair: (_ratio(estimates[pair[1]], estimates[pair[0]]), pair))
    return max(ordered, key=lambda pair: (estimates[pair[0]] - estimates[pair[1]], pair))


def _extremes(estimates: dict[str, float]) -> tuple[str, str] | None:
    """Over every pair of the groups, the one of the largest gap when a single pair has it: the highest group and the
    lowest, found in one pass; None where several pairs might tie (equal estimates, or gaps equal once rounded), which
    `_widest` then settles by the pairs' names.

    Rounding is monotone, so a pair of the largest gap G = highest − lowest pairs a group h with h − lowest = G and a
    group l with highest − l = G: with one of each, that pair is the only one.
    """
    high = max(estimates.values())
    low = min(estimates.values())
    gap = high - low
    if gap <= 0:
        return None
    highs = [group for group, estimate in estimates.items() if estimate - low == gap]
    lows = [group for group, estimate in estimates.items() if high - estimate == gap]
    return (highs[0], lows[0]) if len(highs) == 1 and len(lows) == 1 else None


def described(verdict: PartVerdict, estimates: dict[str, float], raw: dict[str, float]) -> PartVerdict:
    """The verdict with its pair's gap and ratio taken from other counts (those a record publishes); None where a group
    of the pair has no estimate there."""
    pair = verdict.pair
    if pair is None:
        return verdict
    if pair[0] in estimates and pair[1] in estimates:
        return replace(verdict, **{name: value for name, value in _describe(pair, estimates, raw).items() if name != "pair"})
    return replace(verdict, gap=None, ratio=None, raw_gap=None, raw_ratio=None)


def _describe(pair: tuple[str, str], estimates: dict[str, float], raw: dict[str, float]) -> dict:
    """The gap and ratio of a pair, of the point estimates and of the raw rates."""
    high, low = pair
    return {
        "gap": estimates[high] - estimates[low],
        "ratio": _ratio(estimates[low], estimates[high]),
        "pair": pair,
        "raw_gap": raw[high] - raw[low],
        "raw_ratio": _ratio(raw[low], raw[high]),
    }


def _ratio(low: float, high: float) -> float:
    return low / high if high > 0 else 1.0


def either_way(lower: float, upper: float) -> Interval:
    """The interval of m = min(r, 1/r), the ratio of the lower rate to the higher whichever group it is (the four-fifths
    rule's ratio), where r lies in [lower, upper]: m ≥ τ both ways is certified when its lower end is at τ or above.

    >>> either_way(0.5, 1.2), either_way(0.5, 0.9)
    ((0.5, 1.0), (0.5, 0.9))
    """
    ends = [_either_way(lower), _either_way(upper)]
    return min(ends), 1.0 if lower <= 1 <= upper else max(ends)


def _either_way(r: float) -> float:
    """min(r, 1/r): the ratio of the lower rate to the higher, whichever group it is."""
    return 0.0 if r <= 0 or math.isinf(r) else min(r, 1 / r)
