"""Rates whose label is seen only for some trials (repayment only for approved loans): per group the label coverage,
worst-case bounds over what the unseen labels could be (Manski), an inverse-propensity-weighted estimate where the
decision maker logs its probability of letting the label be seen, and a verdict only where that evidence decides (pure).

A rate counts hits among the members of a conditioning set (TPR: the predicted among the truly positive). With h seen
hits and m seen misses, u₁ unseen trials that would be hits and u₀ that would be misses if their unseen label made
them members (TPR, FPR), and U unseen members whose hit is their unseen label (PPV), the rate lies in

    [h / (h + m + u₀ + U),  (h + u₁ + U) / (h + m + u₁ + U)],

the two ends reached by the unseen labels that count least and most. The gap of two groups then lies between the
difference of opposite ends, and the verdict names a violation only when even the most favourable labels put it
beyond ε. With propensities π the ratio ΣA/ΣB (A = member·hit/π, B = member/π over seen trials) estimates the rate
without the bias of looking only where labels are seen, with a delta-method interval.

A plain label missing on one side of the prediction only is caught too: the rate of such a group counts that side
alone, so it is never published as an estimate nor judged (`selective_groups`).
"""

from __future__ import annotations

import math
from typing import Any

from fairstream.estimators.intervals import normal_quantile, wilson
from fairstream.estimators.rate import Rate
from fairstream.trials.outcomes import IN_UNSEEN, SEEN, SEEN_HIT, SEEN_MISS, UNSEEN_IF_IN_HIT, UNSEEN_IF_IN_MISS
from fairstream.verdicts.judge import PairLevel, PartVerdict, VerdictRule, compared_pairs
from fairstream.verdicts.parts import part_body

A, B, AA, BB, AB = range(6, 11)


def manski_bounds(sums: list[float], alpha: float | None = None) -> tuple[float, float] | None:
    """The rate's worst-case bounds (each end widened to its Wilson bound at level 1 − α when α is given), or None
    when no trial can be a member.

    >>> manski_bounds([6, 2, 0, 4, 0, 8])  # 6 of 8 seen positives predicted; 4 unseen, not predicted
    (0.5, 0.75)
    """
    h, m, u1, u0, unseen_in = (sums[i] for i in (SEEN_HIT, SEEN_MISS, UNSEEN_IF_IN_HIT, UNSEEN_IF_IN_MISS, IN_UNSEEN))
    low_n, high_n = h + m + u0 + unseen_in, h + m + u1 + unseen_in
    if low_n <= 0 or high_n <= 0:
        return None
    if alpha is None:
        return h / low_n, (h + u1 + unseen_in) / high_n
    return wilson(h, low_n, alpha)[0], wilson(h + u1 + unseen_in, high_n, alpha)[1]


def weighted_rate(sums: list[float], alpha: float) -> tuple[float, float, tuple[float, float]] | None:
    """The inverse-propensity-weighted rate ΣA/ΣB, its delta-method variance over the n trials and its interval at
    1 − α, or None before any weighted member."""
    n, total_a, total_b = sums[-1], sums[A], sums[B]
    if total_b <= 0 or n <= 1:
        return None
    rate = total_a / total_b
    spread = max(sums[AA] - 2 * rate * sums[AB] + rate * rate * sums[BB], 0.0)
    variance = spread / total_b**2
    margin = normal_quantile(1 - alpha / 2) * math.sqrt(variance)
    return rate, variance, (max(0.0, rate - margin), min(1.0, rate + margin))


def partly_seen_part(groups_sums: dict[str, list[float]], rule: VerdictRule, *, weighted: bool, min_trials: int, level: PairLevel) -> dict[str, Any]:
    """One rate with partly seen labels: per group its coverage and bounds (and weighted estimate), judged per pair."""
    groups: dict[str, Any] = {}
    variances: dict[str, float] = {}
    for group, sums in sorted(groups_sums.items()):
        trials = round(sums[-1])
        if trials <= 0:
            continue
        bounds = manski_bounds(sums)
        cell: dict[str, Any] = {"estimate": None, "trials": trials, "coverage": sums[SEEN] / trials, "bounds": list(bounds) if bounds else None}
        if weighted:
            found = weighted_rate(sums, rule.alpha)
            if found is not None:
                cell["estimate"], cell["interval"], cell["interval_of"] = found[0], list(found[2]), "estimate"
                variances[group] = found[1]
        if trials < min_trials:
            cell["below_floor"] = True
        groups[group] = cell
    judged = [group for group, cell in groups.items() if not cell.get("below_floor") and (cell["estimate"] is not None if weighted else cell["bounds"])]
    pairs = compared_pairs(judged, rule.pairs)
    verdict = _weighted(groups, variances, rule, pairs, level) if weighted else _bounded(groups_sums, rule, pairs, level)
    body = part_body(groups, verdict, rule)
    body["labels"] = "weighted" if weighted else "bounded"
    body["interval"] = list(verdict.interval) if verdict.interval is not None else None
    body["interval_of"] = "gap" if weighted else "gap_bounds"
    return body


def _bounded(groups_sums: dict[str, list[float]], rule: VerdictRule, pairs: list[tuple[str, str]], level: PairLevel) -> PartVerdict:
    """Manski verdicts: violated when the bounds put some pair beyond ε whatever the unseen labels, certified (confident)
    when they put every pair inside, undecided (None) otherwise; the pair named is the one whose bounds reach furthest."""
    if not pairs:
        return PartVerdict(certified=None if rule.mode == "point" else False)
    confident = rule.mode == "confident"
    reach: list[tuple[float, float, tuple[str, str], float | None]] = []
    for a, b in pairs:
        alpha = level((a, b)) if confident else None
        (low_a, high_a), (low_b, high_b) = manski_bounds(groups_sums[a], alpha), manski_bounds(groups_sums[b], alpha)  # type: ignore[misc]
        for high, low, least, most in ((a, b, low_a - high_b, high_a - low_b), (b, a, low_b - high_a, high_b - low_a)):
            reach.append((least, most, (high, low), alpha))
    least, most, pair, alpha = max(reach, key=lambda found: (found[0], found[1], found[2]))
    widest = max(found[1] for found in reach)
    violated: bool | None = True if least > rule.threshold else False if widest <= rule.threshold else None
    certified = None if rule.mode == "point" else widest < rule.threshold
    return PartVerdict(
        pair=pair, interval=(least, most), alpha=alpha, violated=violated,
        clear=None if violated is None else least <= rule.threshold - rule.hysteresis, certified=certified,
    )  # fmt: skip


def _weighted(groups: dict[str, Any], variances: dict[str, float], rule: VerdictRule, pairs: list[tuple[str, str]], level: PairLevel) -> PartVerdict:
    """Verdicts on the weighted estimates: their gap against ε (point), or its interval from the groups' delta-method
    variances (confident)."""
    if not pairs:
        return PartVerdict(certified=None if rule.mode == "point" else False)
    estimate = {group: groups[group]["estimate"] for pair in pairs for group in pair}
    ordered = [(a, b) if estimate[a] >= estimate[b] else (b, a) for a, b in pairs]
    high, low = max(ordered, key=lambda pair: (estimate[pair[0]] - estimate[pair[1]], pair))
    gap = estimate[high] - estimate[low]
    if rule.mode == "point":
        return PartVerdict(gap=gap, pair=(high, low), violated=gap > rule.threshold, clear=gap <= rule.threshold - rule.hysteresis)
    alpha = level((high, low))
    margin = normal_quantile(1 - alpha / 2) * math.sqrt(variances[high] + variances[low])
    inside = normal_quantile(1 - rule.alpha)
    certified = all(abs(estimate[a] - estimate[b]) + inside * math.sqrt(variances[a] + variances[b]) < rule.threshold for a, b in pairs)
    return PartVerdict(
        gap=gap, pair=(high, low), interval=(gap - margin, gap + margin), alpha=alpha, violated=gap - margin > rule.threshold,
        clear=gap - margin <= rule.threshold - rule.hysteresis, certified=certified,
    )  # fmt: skip


SELECTIVE = "selective"


MIN_MISSING = 10
"""Missing labels a group needs before their sharing one prediction is taken for a pattern rather than chance."""


def selective_groups(unlabeled: dict[str, Rate], rates: dict[str, Rate]) -> set[str]:
    """The groups of a true- or false-positive rate whose missing labels (at least `MIN_MISSING`) all share one
    prediction while labelled trials have the other: the labels seen are then a biased sample of the group. (Where
    every trial has the same prediction, missing labels say nothing of it.)

    >>> selective_groups({"a": Rate(hits=0, trials=40), "b": Rate(hits=3, trials=19)}, {"a": Rate(5, 60), "b": Rate(4, 50)})
    {'a'}
    """
    found = set()
    for group, missing in unlabeled.items():
        rate = rates.get(group)
        if rate is None or missing.trials < MIN_MISSING or missing.hits not in (0, missing.trials):
            continue
        other_side = rate.hits if missing.hits == 0 else rate.trials - rate.hits
        if other_side > 0:
            found.add(group)
    return found


def withhold_selective(body: dict[str, Any], selective: set[str], rates: dict[str, Rate], unlabeled: dict[str, Rate]) -> None:
    """Add the selective groups' cells to a part's record without an estimate, with how many labels were missing and
    on which side; the part can then not be certified, and says why."""
    for group in sorted(selective):
        missing = unlabeled[group]
        body["groups"][group] = {
            "estimate": None, "rate": None, "hits": rates[group].hits, "trials": rates[group].trials, "labels": SELECTIVE,
            "unlabeled": missing.trials, "unlabeled_predicted": missing.hits,
        }  # fmt: skip
    body["groups"] = dict(sorted(body["groups"].items()))
    body["labels"] = SELECTIVE
    if body.get("certified"):
        body["certified"] = False
