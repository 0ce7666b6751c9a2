"""A part's record: per-group cells, the gap (or ratio) of the point estimates beside the raw one, the interval and what
it is for, the level it holds at, and the verdict (pure). A rate whose trials carry weights (fairlearn's
`sample_weight`) is judged as the rate of Kish's effective trials n_eff = (Σw)²/Σw², the trials of equal weight that
would estimate it as precisely, with rate · n_eff hits (`weighted_part`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from fairstream.estimators.intervals import INTERVALS, katz_ratio
from fairstream.estimators.rate import Rate
from fairstream.verdicts.judge import OVERALL, GroupInterval, PairLevel, PartVerdict, VerdictRule, described, either_way, judge

FIXED_TIME = "fixed_time"
"""The intervals of confident verdicts hold at one fixed time."""
ANYTIME = "anytime"
"""The intervals of anytime verdicts are confidence sequences: they hold at every evaluation at once."""


class Sequence(Protocol):
    """A confidence sequence of a mean on [0, 1] (see `fairstream.estimators.sequence.RateSequence`)."""

    def bounds(self, alpha: float) -> tuple[float, float]: ...


Sequences = dict[str, Sequence]
"""A part's confidence sequences per group."""


def rate_part(
    rates: dict[str, Rate],
    rule: VerdictRule,
    *,
    prior: float | None,
    confidence: float,
    interval: str,
    min_trials: int,
    level: PairLevel,
    bets: dict[tuple[str, str], Any] | None = None,
    sequences: Sequences | None = None,
    published: dict[str, Rate] | None = None,
    overall: Rate | None = None,
    others: dict[str, tuple[Rate, float]] | None = None,
) -> dict[str, Any]:
    """One conditional rate per group: the MAP estimate (published as the point), the raw rate and, under confident
    and anytime verdicts, its interval; the verdict over the groups at the evidence floor.

    Confident verdicts rest on intervals of the raw counts (`interval` names the method); only `beta_credible`
    intervals are of the posterior under the prior, and then they are for the MAP estimate. `published`: the counts the
    record shows, where they are not those the verdict is reached from (anytime verdicts publish matured trials).
    `overall`: with `compare: overall`, the part's overall counts where they are not the sum of the groups' (weights);
    `others`: per group, the counts of every other group and their share of the overall, likewise. A group's rate less
    the overall one is the share times its difference with the others, which is what a confident interval bounds.
    """
    if prior is None and confidence == 0:
        prior = 0.0  # with κ = 0 the prior has no weight
    kind = INTERVALS[interval]
    of_estimate = kind.uses_prior
    with_intervals = rule.mode != "point"

    def cells_of(counts: dict[str, Rate]) -> tuple[dict[str, Any], dict[str, float], dict[str, float]]:
        groups: dict[str, Any] = {}
        estimates: dict[str, float] = {}
        raw: dict[str, float] = {}
        for group in sorted(counts):
            rate = counts[group]
            if rate.trials <= 0:
                continue
            estimate = rate.get(prior, confidence) if prior is not None else None
            cell: dict[str, Any] = {"estimate": estimate, "rate": rate.hits / rate.trials, "hits": rate.hits, "trials": rate.trials}
            if with_intervals and prior is not None and sequences is not None:
                enclose(cell, sequences[group].bounds(rule.alpha) if group in sequences else (0.0, 1.0), "rate")
            elif with_intervals and prior is not None:
                enclose(cell, kind.group(rate.hits, rate.trials, rule.alpha, prior, confidence), "estimate" if of_estimate else "rate")
            groups[group] = cell
            if rate.trials < min_trials:
                cell["below_floor"] = True
            elif estimate is not None:
                estimates[group] = estimate
                raw[group] = cell["rate"]
        return groups, estimates, raw

    groups, estimates, raw = cells_of(rates)
    complete = every_group_judged(rule, groups, estimates)
    if rule.overall:  # each group against the part's overall rate: a pseudo-group paired with every group judged
        overall = overall or Rate(sum(rate.hits for rate in rates.values()), sum(rate.trials for rate in rates.values()))
        others = others or {group: _others(overall, rate) for group, rate in rates.items()}
        if overall.trials > 0 and estimates and prior is not None:
            estimates[OVERALL], raw[OVERALL] = overall.get(prior, confidence), overall.hits / overall.trials
            rule = replace(rule, pairs=tuple((group, OVERALL) for group in sorted(estimates) if group != OVERALL))
    if rule.mode == "point" or prior is None:
        verdict = judge(rule if prior is not None else VerdictRule(threshold=rule.threshold), estimates, raw=raw)
    elif rule.mode == "anytime":
        verdict = judge(rule, estimates, raw=raw, level=level, bets=bets or {}, complete=every_group_judged(rule, groups, estimates))
    else:

        def difference(high: str, low: str, alpha: float) -> tuple[float, float]:
            if OVERALL in (high, low):  # rate − overall = share of the others × (rate − the others' rate)
                group = low if high == OVERALL else high
                rest, share = others[group]  # type: ignore[index]
                if rest.trials <= 0:
                    return 0.0, 0.0  # the group is every trial: it is the overall rate
                a = rates[group]
                lower, upper = kind.difference(a.hits, a.trials, rest.hits, rest.trials, alpha, prior, confidence)
                return (share * lower, share * upper) if high == group else (-share * upper, -share * lower)
            a, b = rates[high], rates[low]
            return kind.difference(a.hits, a.trials, b.hits, b.trials, alpha, prior, confidence)

        def ratio(high: str, low: str, alpha: float) -> tuple[float, float]:
            return katz_ratio(rates[low].hits, rates[low].trials, rates[high].hits, rates[high].trials, alpha)

        verdict = judge(rule, estimates, raw=raw, level=level, difference=difference, ratio=ratio, complete=complete)
    if published is not None:
        groups, shown_estimates, shown_raw = cells_of(published)
        verdict = described(verdict, shown_estimates, shown_raw)
    body = part_body(groups, verdict, rule)
    if rule.overall and overall is not None and overall.trials > 0:
        body["overall"] = {"estimate": overall.get(prior, confidence) if prior is not None else None, "rate": overall.hits / overall.trials,
                           "hits": overall.hits, "trials": overall.trials}  # fmt: skip
    if rule.mode == "confident":
        interval_of = "raw_ratio" if rule.ratio else "gap" if of_estimate else "raw_gap"  # Katz's ratio interval is of the raw counts
        describe_interval(body, verdict, interval_of)
    elif sequences is not None and rule.ratio:
        publish_ratio_sequence(body, verdict, bets or {})
    elif sequences is not None:
        publish_sequences(body, verdict, bets or {})
    return body


def _others(overall: Rate, rate: Rate) -> tuple[Rate, float]:
    """The counts of every group but one, and their share of the overall trials."""
    rest = Rate(overall.hits - rate.hits, overall.trials - rate.trials)
    return rest, rest.trials / overall.trials if overall.trials > 0 else 0.0


def point_estimates(rates: dict[str, Rate], *, prior: float | None, confidence: float, min_trials: int) -> tuple[dict[str, float], dict[str, float]]:
    """What `rate_part` judges under point verdicts, without the record: the MAP estimates and raw rates of the groups at
    the evidence floor (none without a prior)."""
    if prior is None and confidence == 0:
        prior = 0.0
    estimates: dict[str, float] = {}
    raw: dict[str, float] = {}
    if prior is None:
        return estimates, raw
    for group in sorted(rates):
        rate = rates[group]
        if rate.trials > 0 and rate.trials >= min_trials:
            estimates[group] = rate.get(prior, confidence)
            raw[group] = rate.hits / rate.trials
    return estimates, raw


def publish_ratio_sequence(body: dict[str, Any], verdict: PartVerdict, bets: dict[tuple[str, str], Any]) -> None:
    """Anytime ratio verdicts: the confidence sequence of the named pair's smaller ratio at the pair's level, the one its
    verdict is read from (violated when its upper end is below τ, certified when its lower end is at τ or above)."""
    body["interval_validity"] = ANYTIME
    if verdict.pair is None or verdict.alpha is None:
        return
    bet = bets.get(verdict.pair) or bets.get(verdict.pair[::-1])
    if bet is not None:
        enclose(body, either_way(*bet.bounds(verdict.alpha)), "raw_ratio")


def publish_sequences(
    body: dict[str, Any], verdict: PartVerdict, bets: dict[tuple[str, str], Any], width: float = 1.0, interval_of: str = "raw_gap"
) -> None:
    """Anytime verdicts: the confidence sequence of the named pair's gap (higher minus lower, at the pair's level: its
    ends cross ε where the test's verdict turns), on an outcome range of `width`, and the validity of every interval in
    the part."""
    body["interval_validity"] = ANYTIME
    if verdict.pair is None or verdict.alpha is None:
        return
    high, low = verdict.pair
    bet = bets.get((high, low)) or bets.get((low, high))
    if bet is None:
        return
    lower, upper = (width * bound for bound in bet.bounds(verdict.alpha))
    enclose(body, (lower, upper) if (high, low) in bets else (-upper, -lower), interval_of)


def enclose(body: dict[str, Any], interval: tuple[float, float], interval_of: str) -> None:
    """Publish an interval as that of `body[interval_of]`, widened to that point where it does not hold it
    (`interval_widened`): a confidence sequence (the values no bettor has rejected so far, or a weighted mean's band)
    may move past the point, and an equal-tailed credible interval may leave out its mode. A superset of an interval
    keeps its level, and an interval never excludes the value it names."""
    lower, upper = interval
    point = body.get(interval_of)
    if point is None and interval_of in body:  # the point is not known yet (a pair's trials not matured): no interval of it
        body.update(interval=None, interval_of=interval_of, interval_reason=f"no {interval_of.replace('_', ' ')} to hold yet: a group of the pair has no matured trial")
        return
    if point is not None and not lower <= point <= upper:
        lower, upper = min(lower, point), max(upper, point)
        body["interval_widened"] = True
    body["interval"] = [lower, upper]
    body["interval_of"] = interval_of


def describe_interval(body: dict[str, Any], verdict: PartVerdict, interval_of: str) -> None:
    """Name what a confident verdict's interval is for (widened to hold that point, see `enclose`), or say why there is none."""
    if verdict.interval is None:
        body.update(interval=None, interval_of=interval_of, interval_reason="fewer than two groups at the evidence floor")
    else:
        enclose(body, verdict.interval, interval_of)


def every_group_judged(rule: VerdictRule, groups: dict[str, Any], estimates: dict[str, float]) -> bool:
    """Whether every group the part compares (each group seen, or each group of the listed pairs) has a judged
    estimate: a group below the evidence floor, or a listed one not seen yet, leaves the part uncertifiable."""
    compared = set(groups) if rule.pairs is None else {group for pair in rule.pairs for group in pair}
    return compared <= set(estimates)


def measure_verdict(
    rule: VerdictRule, estimates: dict[str, float], level: PairLevel, group_bounds: GroupInterval | None, complete: bool = True
) -> PartVerdict:
    """The verdict on mean outcomes: confident ones from the two groups' bounds at half the pair's level each."""
    if rule.mode != "confident" or group_bounds is None:
        return judge(rule, estimates, level=level, complete=complete)

    def difference(high: str, low: str, alpha: float) -> tuple[float, float]:
        low_a, high_a = group_bounds(high, alpha / 2)
        low_b, high_b = group_bounds(low, alpha / 2)
        return low_a - high_b, high_a - low_b

    return judge(rule, estimates, level=level, difference=difference, complete=complete)


def standardized_part(strata: dict[str, Any], rule: VerdictRule, min_trials: int) -> dict[str, Any]:
    """Conditional statistical parity over all strata at once: each group's rate in each stratum, weighted by the
    stratum's share of all trials (direct standardization), so groups are compared as if spread alike over strata.
    A point verdict, whatever the monitor's mode: it takes no share of the error budget."""
    sizes = {part: sum(cell["trials"] for cell in body["groups"].values()) for part, body in strata.items()}
    total = sum(sizes.values())
    weighted: dict[str, float] = {}
    weights: dict[str, float] = {}
    trials: dict[str, int] = {}
    for part, body in strata.items():
        for group, cell in body["groups"].items():
            if cell["estimate"] is None or cell["trials"] < min_trials:
                continue
            share = sizes[part] / total
            weighted[group] = weighted.get(group, 0.0) + share * cell["estimate"]
            weights[group] = weights.get(group, 0.0) + share
            trials[group] = trials.get(group, 0) + cell["trials"]
    estimates = {group: weighted[group] / weights[group] for group in sorted(weighted)}
    groups = {group: {"estimate": estimates[group], "trials": trials[group], "weight": weights[group]} for group in estimates}
    point = VerdictRule(threshold=rule.threshold, hysteresis=rule.hysteresis)
    return {**part_body(groups, judge(point, estimates), point), "verdict": "point"}


def part_body(groups: dict[str, Any], verdict: PartVerdict, rule: VerdictRule) -> dict[str, Any]:
    """A part's record: per-group cells, the gap (or ratio) of the point estimates and the raw one, the pair, the
    verdict (with the hysteresis margin of its recovery, where the spec sets one), the pair's level and its evidence."""
    body: dict[str, Any] = {
        "groups": groups,
        "gap": verdict.gap,
        "ratio": verdict.ratio,
        "pair": list(verdict.pair) if verdict.pair else None,
        "raw_gap": verdict.raw_gap,
        "raw_ratio": verdict.raw_ratio,
        "threshold": rule.threshold,
        "violated": verdict.violated,
        "clear": verdict.clear,
        "certified": verdict.certified,
    }
    if rule.hysteresis:
        body["hysteresis"] = rule.hysteresis
    if verdict.alpha is not None:
        body["alpha"] = verdict.alpha
    if verdict.log_wealth is not None:
        body["log_wealth"] = verdict.log_wealth
    if verdict.log_wealth_within is not None:
        body["log_wealth_within"] = verdict.log_wealth_within
    if rule.mode != "point" and any("interval" in cell for cell in groups.values()):
        body["interval_validity"] = FIXED_TIME
    return body


WEIGHTED_HITS, WEIGHT, SQUARES, HITS, TRIALS = range(5)
"""Where each sum sits in a weighted cell: Σ w·hit, Σ w, Σ w², the hits and the trials counted."""


def effective(cell: list[float]) -> Rate:
    """The rate of Kish's effective trials: n_eff = (Σw)²/Σw², hits n_eff · Σw·hit/Σw (all weights 0: no trials)."""
    if cell[WEIGHT] <= 0 or cell[SQUARES] <= 0:
        return Rate(0, 0)
    trials = cell[WEIGHT] ** 2 / cell[SQUARES]
    hits = min(trials, max(0.0, trials * cell[WEIGHTED_HITS] / cell[WEIGHT]))  # rounding may put an all-hit cell a hair above
    return Rate(hits, trials)  # type: ignore[arg-type]


def weighted_part(
    cells: dict[str, list[float]], rule: VerdictRule, *, prior: float | None, confidence: float, interval: str, min_trials: int, level: PairLevel
) -> dict[str, Any]:
    """The part's record as `rate_part` makes it from the effective trials, each group's cell then showing the weighted
    rate exactly, the trials and hits counted, the weight and the effective trials."""
    total = [sum(cell[index] for cell in cells.values()) for index in range(TRIALS + 1)]
    others = None
    if rule.overall:  # each group's others: the total less its own sums, and their share of the total weight
        others = {group: (effective([whole - own for whole, own in zip(total, cell, strict=True)]), 1 - cell[WEIGHT] / total[WEIGHT] if total[WEIGHT] > 0 else 0.0)
                  for group, cell in cells.items()}  # fmt: skip
    body = rate_part(
        {group: effective(cell) for group, cell in cells.items()}, rule, prior=prior, confidence=confidence, interval=interval,
        min_trials=min_trials, level=level, overall=effective(total) if rule.overall else None, others=others,
    )  # fmt: skip
    for group, cell in cells.items():  # a group whose trials all weigh 0 has no rate, but its trials were counted
        if group not in body["groups"] and cell[TRIALS] > 0:
            body["groups"][group] = {"estimate": None, "rate": None, "below_floor": True}
    body["groups"] = dict(sorted(body["groups"].items()))
    for group, shown in body["groups"].items():
        _counted(shown, cells[group])
    if "overall" in body:
        _counted(body["overall"], total)
    return body


def _counted(shown: dict[str, Any], cell: list[float]) -> None:
    """A published cell with the weighted rate as Σw·hit/Σw, its counts whole and its weights beside them."""
    effective_trials = cell[WEIGHT] ** 2 / cell[SQUARES] if cell[SQUARES] > 0 else 0.0
    shown.update(
        rate=cell[WEIGHTED_HITS] / cell[WEIGHT] if cell[WEIGHT] > 0 else None, hits=round(cell[HITS]), trials=round(cell[TRIALS]),
        weight=cell[WEIGHT], effective_trials=effective_trials,
    )  # fmt: skip
