"""Hypothesis strategies over the spec language and over streams of applications, decisions and repayments: every
metric type, verdict, window, publishing setting and kind of group, and streams whose labels arrive with delays that
depend on the outcome (early, late, never), with ties, empty groups and groups of one trial."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

HOUR = 3_600_000
DAY = 24 * HOUR
CLOSE_AFTER_HOURS = 240
GROUPS = ("A", "B", "C")
PROXY_VECTORS = ({"A": 1.0, "B": 0.0, "C": 0.0}, {"A": 0.5, "B": 0.5, "C": 0.0}, {"A": 0.2, "B": 0.3, "C": 0.5}, {"A": 0.0, "B": 0.1, "C": 0.9})

KINDS = {
    "APPLY": {"g": "str", "s": "str", "score": "float", "asked": "float", "g_p": "probabilities"},
    "DECIDE": {"approved": "bool", "amount": "float"},
    "REPAY": {},
}
VARIABLES = {
    "group": {"first": "APPLY", "field": "g"},
    "sex": {"first": "APPLY", "field": "s"},
    "group_p": {"first": "APPLY", "field": "g_p"},
    "score": {"first": "APPLY", "field": "score"},
    "asked": {"first": "APPLY", "field": "asked"},
    "approved": {"first": "DECIDE", "field": "approved", "default": False},
    "amount": {"first": "DECIDE", "field": "amount", "default": 0.0},
    "repaid": {"exists": "REPAY", "within": f"{CLOSE_AFTER_HOURS}h"},
}
RATE_METRICS = ("demographic_parity", "conditional_statistical_parity", "equal_opportunity", "equalized_odds", "predictive_parity", "disparate_impact")
LABELLED = ("equal_opportunity", "equalized_odds", "predictive_parity")
OVERALL_REFUSED = ("delayed_impact", "benefit_rate", "conditional_statistical_parity")
WEIGHTED = ("demographic_parity", "disparate_impact", "equal_opportunity", "equalized_odds", "predictive_parity")


@st.composite
def metrics(draw: st.DrawFn) -> dict[str, Any]:
    """A metric of any type over the stream's variables, its groups listed, `all`, intersectional or proxies."""
    kind = draw(st.sampled_from([*RATE_METRICS, "delayed_impact", "benefit_rate", "scoring_rate"]))
    metric: dict[str, Any] = {"type": kind, "threshold": 0.8 if kind == "disparate_impact" else draw(st.sampled_from([0.05, 0.1, 0.3]))}
    groupings = ["listed", "all", "unseen", "intersectional"]
    if kind in ("demographic_parity", "disparate_impact", "equal_opportunity", "equalized_odds"):
        groupings.append("proxy")
    grouping = draw(st.sampled_from(groupings))
    metric["group"] = {"intersectional": ["group", "sex"], "proxy": "group_p"}.get(grouping, "group")
    metric["groups"] = {"listed": ["A", "B"], "unseen": ["A", "B", "D"], "proxy": list(GROUPS)}.get(grouping, "all")
    if kind in RATE_METRICS:
        metric["prediction"] = "approved"
    if kind in LABELLED:
        metric["label"] = "repaid" if grouping == "proxy" else draw(st.sampled_from(["repaid", {"variable": "repaid", "observed_when": "approved"}]))
    if kind == "conditional_statistical_parity":
        metric["condition"] = "sex"
    if kind == "delayed_impact":
        metric["outcome"] = "amount"
        if draw(st.booleans()):
            metric["constraints"] = [{"tau": 0.3, "delta": 0.1}]
            if draw(st.booleans()):
                del metric["threshold"]
    if kind == "benefit_rate":
        metric.update(supply="amount", demand="asked")
        metric.update(draw(st.sampled_from([{}, {"discount": 0.9}, {"recency": 0.9}])))
    if kind == "scoring_rate":
        metric["score"] = "score"
        if draw(st.booleans()):
            metric["median"] = 0.5
    return metric


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    """A spec over the application stream: any metric, verdict, evaluation cadence, window and publishing setting."""
    metric = draw(metrics())
    verdict = "point" if metric["type"] == "benefit_rate" else draw(st.sampled_from(["point", "confident", "anytime", "change"]))
    estimator: dict[str, Any] = {"verdict": verdict, "prior": 0.5, "confidence": draw(st.sampled_from([0, 10]))}
    if draw(st.booleans()):
        estimator["min_trials"] = draw(st.sampled_from([1, 3]))
    if verdict == "confident":
        estimator["interval"] = draw(st.sampled_from(["wilson", "clopper_pearson", "beta_credible"]))
    if metric["type"] == "delayed_impact":
        estimator["outcome_range"] = [0, 1]
        estimator["bounds"] = draw(st.sampled_from(["student_t", "hoeffding"]))
    if draw(st.booleans()):
        estimator["hysteresis"] = 0.02
    seen_whole = not isinstance(metric.get("label"), dict) and metric["group"] != "group_p"
    judged_whole = verdict == "point" or (verdict == "confident" and metric["type"] != "disparate_impact")
    if judged_whole and metric["type"] not in OVERALL_REFUSED and seen_whole and draw(st.booleans()):
        metric["compare"] = "overall"
    if verdict in ("point", "confident") and metric["type"] in WEIGHTED and seen_whole and draw(st.booleans()):
        metric["weight"] = "amount"  # zero for applicants never decided: a group may weigh nothing
    windows = [{"kind": "cumulative"}]
    if verdict not in ("anytime", "change"):  # these read the whole stream
        windows += [{"kind": "sliding", "length": "5d"}, {"kind": "sliding", "length": "20d", "by": "opened"}, {"kind": "periodic", "length": "7d", "by": "opened"}]
    window = draw(st.sampled_from(windows))
    on_close = window["kind"] == "cumulative" and metric.get("discount", 1) == 1 and metric.get("recency", 1) == 1 and draw(st.booleans())
    evaluate = {"on": "close", "resolution": "6h"} if on_close else {"every": draw(st.sampled_from(["6h", "1d"]))}
    publish: dict[str, Any] = {"min_cell": draw(st.sampled_from([1, 3, 10]))}
    cadence = draw(st.sampled_from([None, "2d", "5 closes"] if on_close else [None, "2d"]))
    if cadence is not None:
        publish["every"] = cadence
    trial: dict[str, Any] = {"opens_on": ["APPLY"], "close_after": f"{CLOSE_AFTER_HOURS}h"}
    if draw(st.booleans()):
        trial["close_on"] = ["DECIDE"]
    variables = VARIABLES
    if metric["group"] == "group_p" and draw(st.booleans()):  # some applicants report their group: the proxy's calibration is tested
        variables = {**VARIABLES, "group_p": {**VARIABLES["group_p"], "truth": "g_self"}}
    signals = draw(event_signals(metric, evaluate))
    return {
        **signals,
        "monitor": "generated",
        "input": {"time": "time", "time_format": "epoch_ms", "key": "id", "kind": "event", "kinds": KINDS, "max_future": None},
        "trial": trial,
        "variables": variables,
        "metric": metric,
        "estimator": estimator,
        "evaluate": evaluate,
        "window": window,
        "publish": publish,
    }


PARTS = {
    "demographic_parity": "selection_rate", "conditional_statistical_parity": "selection_rate", "disparate_impact": "selection_rate",
    "equal_opportunity": "true_positive_rate", "equalized_odds": "false_positive_rate", "predictive_parity": "positive_predictive_value",
    "delayed_impact": "mean_outcome", "benefit_rate": "benefit_rate", "scoring_rate": "scoring_rate",
}  # fmt: skip


@st.composite
def event_signals(draw: st.DrawFn, metric: dict[str, Any], evaluate: dict[str, Any]) -> dict[str, Any]:
    """Windows over raw events (any aggregate, with or without by and where) and triggers over them and the parts, or none."""
    if not draw(st.booleans()):
        return {}
    over = draw(st.sampled_from(["1d", "4d"] if evaluate.get("every") != "6h" else ["6h", "2d"]))
    aggregate = draw(st.sampled_from(["count", "sum", "mean", "min", "max"]))
    window: dict[str, Any] = {aggregate: "APPLY" if aggregate == "count" and draw(st.booleans()) else "APPLY.score" if aggregate != "count" else "DECIDE.amount", "over": over}
    if draw(st.booleans()):
        window["by"] = "g"
    if draw(st.booleans()):
        window["where"] = "asked > 0.3"
    part = PARTS[metric["type"]]
    read = "w['A']" if "by" in window else "w"
    conditions = [f"{read} > 0.5", f"{part}.gap > 0.1", f"{part}.status == 'violated'", f"{part}.trials['B'] < 5 or closed_trials > 20"]
    chosen = draw(st.lists(st.sampled_from(conditions), min_size=1, max_size=3, unique=True))
    return {"windows": {"w": window}, "triggers": [{"name": f"t{index}", "when": when} for index, when in enumerate(chosen)]}


@dataclass(frozen=True)
class Applicant:
    """One applicant's trial as drawn: who, when, what was decided and whether (and when) repayment was seen."""

    key: str
    group: str
    sex: str
    opened: int
    approved: bool
    repaid: bool
    decided_after: int | None
    repaid_after: int | None
    score: float
    asked: float
    amount: float
    proxy: dict[str, float]


@st.composite
def applicants(draw: st.DrawFn) -> list[Applicant]:
    """A handful of applicants or a few hundred over two weeks, on whole half-days (ties), group A common and C rare; a repayment is seen
    sooner when the decision was an approval, may come before the decision or after the trial closed, or never."""
    count = draw(st.one_of(st.integers(0, 12), st.integers(40, 300)))
    drawn = []
    for index in range(count):
        group = draw(st.sampled_from(["A", "A", "B", "C"]))
        approved = draw(st.booleans()) if group != "A" else draw(st.sampled_from([True, True, True, False]))
        repaid = draw(st.booleans())
        decided_after = draw(st.sampled_from([None, 1, 5, 30, 300]))
        quick, slow = (2, 50) if approved else (100, 400)
        repaid_after = draw(st.sampled_from([quick, slow, 3])) if repaid else None
        drawn.append(
            Applicant(
                key=f"k{index}",
                group=group,
                sex=draw(st.sampled_from(["X", "Y"])),
                opened=draw(st.integers(0, 28)) * 12 * HOUR,
                approved=approved,
                repaid=repaid,
                decided_after=decided_after,
                repaid_after=repaid_after,
                score=draw(st.sampled_from([0.1, 0.5, 0.9])),
                asked=draw(st.sampled_from([1.0, 2.0])),
                amount=draw(st.sampled_from([0.0, 0.4, 1.0])) if approved else 0.0,
                proxy=draw(st.sampled_from(PROXY_VECTORS)),
            )
        )
    return drawn


def events_of(people: list[Applicant]) -> list[dict[str, Any]]:
    """Each applicant's events (APPLY, DECIDE where decided, REPAY where repaid), in event-time order, ties in the order made."""
    events = []
    for person in people:
        events.append(
            {"time": person.opened, "id": person.key, "event": "APPLY", "g": person.group, "s": person.sex, "score": person.score, "asked": person.asked, "g_p": person.proxy}
            | ({"g_self": person.group} if person.key[-1] in "05" else {})  # a self-reported group on a fifth of them, or null
            | ({"g_self": None} if person.key[-1] == "9" else {})
        )
        if person.decided_after is not None:
            events.append({"time": person.opened + person.decided_after * HOUR, "id": person.key, "event": "DECIDE", "approved": person.approved, "amount": person.amount})
        if person.repaid_after is not None:
            events.append({"time": person.opened + person.repaid_after * HOUR, "id": person.key, "event": "REPAY"})
    return sorted(events, key=lambda event: event["time"])
