"""The verdicts' error rates in the conditions production brings, by simulation: each case runs the monitor over
seeded streams whose generating process has no violation, and counts how often it says otherwise.

- confident verdicts, one look at a fixed time, under strong priors and unequal groups (fair and boundary rates);
- anytime verdicts read at every evaluation while one group's rejections are decided hours after its approvals;
- ELF constraints against a baseline estimated from a shorter period than the later one (g = 0, the boundary);
- one budget over five groups and two parts, one group at the boundary (equalized odds, `groups: all` and a list).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import product
from typing import Any

import numpy as np

from fairstream.compiler.load import parse_spec
from fairstream.compiler.plan import Plan, build_plan
from fairstream.lab.studies.runs import monitor_records, standard_error
from fairstream.monitor import Monitor
from fairstream.trials.bucket import FINISHED, Report
from fairstream.trials.outcomes import TickDelta
from fairstream.verdicts.budget import Budget
from fairstream.verdicts.constraints import ConstraintRule, constraint_part

ALPHA, EPSILON, DELTA = 0.05, 0.1, 0.1
KAPPAS = (0.0, 24.0, 100.0)
RATIOS = ((1, 1), (1, 4), (1, 9))
BASE_RATES = (0.1, 0.5)
DECISIONS = 1000


@dataclass(frozen=True)
class Case:
    """One simulated condition: how often the monitor claimed what does not hold, against the level it states."""

    family: str
    condition: str
    runs: int
    errors: int
    bound: float

    @property
    def rate(self) -> float:
        return self.errors / self.runs

    @property
    def error(self) -> float:
        """The Monte Carlo standard error of `rate`."""
        return standard_error(self.rate, self.runs)

    @property
    def holds(self) -> bool:
        """Whether the rate is within its bound up to three Monte Carlo standard errors of a rate at the bound."""
        return self.rate <= self.bound + 3 * standard_error(self.bound, self.runs)


def _spec(metric: dict[str, Any], estimator: dict[str, Any]) -> Plan:
    return build_plan(
        parse_spec(
            {
                "monitor": "simulated",
                "input": {"time": "time", "key": "id", "kinds": {"DECISION": {"group": "str", "yes": "bool", "label": "bool"}}},
                "trial": {"close_on": ["DECISION"]},
                "variables": {"group": {"first": "DECISION", "field": "group"}, "yes": {"first": "DECISION", "field": "yes"}, "label": {"first": "DECISION", "field": "label"}},
                "metric": {"group": "group", "prediction": "yes", "threshold": EPSILON, **metric},
                "estimator": {"prior": 0.5, **estimator},
                "evaluate": {"every": "1d"},
                "publish": {"min_cell": 1},
            }
        )
    )


def _one_look(plan: Plan, counts: dict[str, dict[str, tuple[int, int]]]) -> dict[str, Any]:
    """The monitor's one evaluation of the given counts (per part, per group: hits, trials): its estimate record."""
    delta = TickDelta()
    for part, groups in counts.items():
        for group, cell in groups.items():
            delta.counts[(part, group)] = list(cell)
    monitor = Monitor(dataclasses.replace(plan.monitor, reporters=1))
    return next(r for r in monitor.receive(Report(0, FINISHED, {86_400_000: delta})) if r["type"] == "fairness.estimate")


def confident_cases(runs: int, seed: int = 0) -> Iterator[Case]:
    """Fair (equal rates) and boundary (gap exactly ε, either group higher) streams of 1,000 decisions, one look."""
    scenarios: dict[str, Callable[[float], tuple[float, float]]] = {
        "fair": lambda p: (p, p),
        "boundary, smaller group higher": lambda p: (p + EPSILON, p),
        "boundary, larger group higher": lambda p: (p, p + EPSILON),
    }
    rng = np.random.default_rng(seed)
    for kappa, (name, scenario), ratio, p in product(KAPPAS, scenarios.items(), RATIOS, BASE_RATES):
        plan = _spec({"type": "demographic_parity", "groups": ["a", "b"]}, {"verdict": "confident", "alpha": ALPHA, "confidence": kappa})
        sizes = (round(DECISIONS * ratio[0] / sum(ratio)), DECISIONS - round(DECISIONS * ratio[0] / sum(ratio)))
        rates = scenario(p)
        hits = [rng.binomial(size, rate, runs) for size, rate in zip(sizes, rates)]
        errors = sum(
            _one_look(plan, {"selection_rate": {"a": (int(hits[0][run]), sizes[0]), "b": (int(hits[1][run]), sizes[1])}})["parts"]["selection_rate"]["violated"] is True
            for run in range(runs)
        )
        yield Case("confident, one look", f"κ = {kappa:g}, {name}, rates {rates[0]:g} / {rates[1]:g}, {ratio[0]}:{ratio[1]}", runs, errors, ALPHA)


def family_cases(runs: int, seed: int = 0) -> Iterator[Case]:
    """Five groups of 150 trials, equalized odds, one look, the fifth group's rates exactly ε above the others' in both
    parts (four pairs per part at the boundary): any part violated is a family-wise error."""
    names = ["g1", "g2", "g3", "g4", "g5"]
    rates = {"true_positive_rate": 0.6, "false_positive_rate": 0.3}
    rng = np.random.default_rng(seed)
    for groups in ("all", names):
        plan = _spec({"type": "equalized_odds", "label": "label", "groups": groups}, {"verdict": "confident", "alpha": ALPHA, "confidence": 24})
        errors = 0
        for _ in range(runs):
            counts = {part: {g: (int(rng.binomial(150, rate + EPSILON * (g == "g5"))), 150) for g in names} for part, rate in rates.items()}
            errors += any(body["violated"] is True for body in _one_look(plan, counts)["parts"].values())
        yield Case("one budget, five groups, two parts", f"groups: {'all' if groups == 'all' else 'listed'}", runs, errors, ALPHA)


def baseline_cases(runs: int, seed: int = 0) -> Iterator[Case]:
    """Baseline and later periods from one distribution (Beta(2, 2) outcomes): certifying mean ≥ baseline is false at
    the boundary g = 0 with probability at most δ, for a later period as long as the baseline and ten times longer."""
    rng = np.random.default_rng(seed)
    for bound, factor in product(("student_t", "hoeffding"), (1, 10)):
        rule = ConstraintRule("mean_outcome>=baseline", "at_least", DELTA, bound, baseline=1, outcome_range=(0.0, 1.0))  # type: ignore[arg-type]
        errors = 0
        for _ in range(runs):
            before, after = rng.beta(2, 2, 50), rng.beta(2, 2, 50 * factor)
            baseline = {"g": [before.sum(), (before**2).sum(), 50]}
            sums = {"g": [before.sum() + after.sum(), (before**2).sum() + (after**2).sum(), 50 * (1 + factor)]}
            errors += constraint_part(rule, sums, baseline, min_trials=1, budget=Budget(DELTA, 1))["groups"]["g"]["certified"]
        yield Case("ELF baseline, false certificates", f"{bound.replace('_', ' ')}, later period {factor}× the baseline", runs, errors, DELTA)


LOANS: dict[str, Any] = {
    "monitor": "loans",
    "input": {"time": "time", "key": "id", "kind": "kind", "kinds": {"APPLY": {"group": "str"}, "DECISION": {"approved": "bool"}}},
    "trial": {"opens_on": ["APPLY"], "close_on": ["DECISION"], "close_after": "2d"},
    "variables": {"group": {"first": "APPLY", "field": "group"}, "approved": {"first": "DECISION", "field": "approved", "default": False}},
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "approved", "groups": ["A", "B"], "threshold": EPSILON},
    "estimator": {"verdict": "anytime", "alpha": ALPHA},
    "evaluate": {"every": "1h"},
    "publish": {"min_cell": 1},
}
"""Loan applications, each opened by APPLY and closed by its DECISION, judged every hour by anytime verdicts."""


def loan_events(n: int, seed: int, rejection_delay_a: float, rates: tuple[float, float] = (0.5, 0.5)) -> list[dict[str, Any]]:
    """Applications approved with probability `rates` (A, B; fair by default) one minute apart, decided an hour later,
    but group A's rejections `rejection_delay_a` hours later: the order labels arrive in depends on the outcome."""
    rng = np.random.default_rng(seed)
    in_a = rng.random(n) < 0.5
    approved = rng.random(n) < np.where(in_a, *rates)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    events = []
    for index in range(n):
        opened = start + timedelta(minutes=index)
        delay = rejection_delay_a if in_a[index] and not approved[index] else 1.0
        events.append((opened, {"id": str(index), "kind": "APPLY", "group": "A" if in_a[index] else "B"}))
        events.append((opened + timedelta(hours=delay), {"id": str(index), "kind": "DECISION", "approved": bool(approved[index])}))
    events.sort(key=lambda pair: (pair[0], pair[1]["id"]))
    return [{**event, "time": moment.isoformat().replace("+00:00", "Z")} for moment, event in events]


def anytime_cases(runs: int, delays: tuple[float, ...] = (1.0, 10.0)) -> Iterator[Case]:
    """Fair loan streams of 600 applications through the dataflow, read every hour: any violation is a false alarm."""
    plan = build_plan(parse_spec(LOANS))
    for delay in delays:
        errors = sum(any(r["type"] == "fairness.violation" for r in monitor_records(plan, loan_events(600, seed, delay))) for seed in range(runs))
        condition = "every decision an hour after its application" if delay == 1.0 else f"group A's rejections decided {delay:g} h after its approvals"
        yield Case("anytime, read every hour", condition, runs, errors, ALPHA)


def agreement_cases(runs: int) -> Iterator[Case]:
    """Anytime four-fifths verdicts on loan streams of 3,000 applications read every hour, one where the rule holds and
    one where B's rate is 0.6 of A's: every look whose published interval says otherwise than its status is an error
    (violated exactly when the interval ends below τ, certified exactly when it starts at τ or above)."""
    spec = {**LOANS, "trial": {**LOANS["trial"], "close_after": "3h"}, "metric": {**LOANS["metric"], "type": "disparate_impact", "threshold": 0.8}}
    plan = build_plan(parse_spec(spec))
    for rates, condition in (((0.5, 0.5), "equal rates"), ((0.5, 0.3), "B's rate 0.6 of A's")):
        looks = errors = 0
        for seed in range(runs):
            for record in monitor_records(plan, loan_events(3000, seed, 1.0, rates)):
                body = record["parts"]["selection_rate"] if record["type"] == "fairness.estimate" else None
                if body is None or body.get("interval") is None or body.get("interval_widened"):
                    continue
                low, high = body["interval"]
                looks += 1
                errors += (body["status"] == "violated") != (high < 0.8) or (body["status"] == "certified") != (low >= 0.8)
        yield Case("anytime ratio: record against verdict", condition, looks, errors, 0.0)

