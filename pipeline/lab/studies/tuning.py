"""Tune κ and ε of the seminar monitor: how often it triggers on each assignment algorithm, over a grid of (κ, ε).

As in the RTLola seminar study, every algorithm assigns the same seeded scenarios and the monitor
runs over each one; a trigger is an evaluation with a violated verdict in some seminar. The counts
per seminar and gender at every evaluation do not depend on κ or ε, so each scenario runs through
the monitor once, with κ = 0, and the verdicts of every grid point are recomputed from the counts
that run reports, with the monitor's arithmetic: MAP estimate `(hits + prior·κ)/(trials + κ)` per
group with at least the spec's evidence floor of trials, gap = max − min over at least two such groups,
violated when the gap exceeds ε. Any point-verdict spec over the seminar streams can be tuned; by default
demographic parity over all seminars (`DEFAULT_SPEC`), whose trigger counts the RTLola paper reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fairstream.connectors.synthetic.seminar import ALGORITHMS, seminar_events
from fairstream.lab.studies.runs import monitor_records, tuned_plan
from fairstream.monitoring.evaluation import STANDARDIZED
from fairstream.paths import SPECS_DIR
from fairstream.records.envelope import ESTIMATE
from fairstream.records.errors import InputError

DEFAULT_SPEC = SPECS_DIR / "seminar_demographic_parity.yaml"
"""Demographic parity over all seminars: the property of the RTLola study's Fig. 5 counts."""
CSP_SPEC = SPECS_DIR / "seminar_conditional_statistical_parity.yaml"
"""Conditional statistical parity, per seminar."""

KAPPAS = (10.0, 30.0, 54.0, 80.0)
EPSILONS = (0.05, 0.085, 0.1, 0.15)
"""The default grid: the RTLola study's (κ, ε) points and their neighbours."""

FAIR, UNFAIR = "EqualGender", "Randomize"
"""The ratio of their trigger counts measures how well a grid point tells unequal acceptance from noise."""


@dataclass(frozen=True)
class Counts:
    """One monitor run's counts at every evaluation, by part (seminar) and group; `prior` is NaN while undefined."""

    parts: tuple[str, ...]
    groups: tuple[str, ...]
    hits: np.ndarray
    trials: np.ndarray
    """Shape (evaluations, parts, groups)."""
    prior: np.ndarray
    """Shape (evaluations,)."""


def counts_of(records: Sequence[dict[str, Any]]) -> Counts:
    """The counts in a run's estimate records, in evaluation order (parts and groups sorted)."""
    estimates = [record for record in records if record["type"] == ESTIMATE]
    parts = sorted({part for record in estimates for part in record["parts"] if part != STANDARDIZED})  # per seminar, as in the RTLola study
    groups = sorted({group for record in estimates for body in record["parts"].values() for group in body["groups"]})
    hits = np.zeros((len(estimates), len(parts), len(groups)))
    trials = np.zeros_like(hits)
    for index, record in enumerate(estimates):
        for p, part in enumerate(parts):
            cells = record["parts"].get(part, {"groups": {}})["groups"]
            for g, group in enumerate(groups):
                if group in cells:
                    hits[index, p, g] = cells[group]["hits"]
                    trials[index, p, g] = cells[group]["trials"]
    prior = np.array([np.nan if record["prior"] is None else record["prior"] for record in estimates], dtype=float)
    return Counts(tuple(parts), tuple(groups), hits, trials, prior)


def verdicts(counts: Counts, kappas: Sequence[float], epsilons: Sequence[float], floor: int = 1) -> np.ndarray:
    """Each part's verdict at every evaluation and grid point: 1 violated, 0 not, NaN undefined; shape (κ, ε, evaluations, parts).

    >>> counts = Counts(("s",), ("f", "m"), np.array([[[1, 2]], [[3, 3]]]), np.array([[[2, 2]], [[6, 3]]]), np.array([0.5, 0.5]))
    >>> verdicts(counts, [0, 2], [0.4]).tolist()  # gaps 0.5, 0.5 at κ = 0; 0.25, 0.3 at κ = 2
    [[[[1.0], [1.0]]], [[[0.0], [0.0]]]]
    """
    kappa = np.asarray(kappas, dtype=float)[:, None, None, None]
    prior = np.where(kappa == 0, 0.0, counts.prior[None, :, None, None])  # with κ = 0 the prior has no weight, even undefined
    with np.errstate(invalid="ignore"):  # 0/0 for a group without trials at κ = 0: not present, masked below
        estimate = (counts.hits[None] + prior * kappa) / (counts.trials[None] + kappa)  # (κ, evaluations, parts, groups)
    present = np.broadcast_to(counts.trials[None] >= max(floor, 1), estimate.shape)
    high = np.where(present, estimate, -np.inf).max(axis=-1, initial=-np.inf)
    low = np.where(present, estimate, np.inf).min(axis=-1, initial=np.inf)
    defined = (present.sum(axis=-1) >= 2) & ~np.isnan(high)
    gap = np.where(defined, high - low, np.nan)[:, None]  # (κ, 1, evaluations, parts)
    epsilon = np.asarray(epsilons, dtype=float)[None, :, None, None]
    return np.where(defined[:, None], gap > epsilon, np.nan)


def triggers(verdict: np.ndarray) -> np.ndarray:
    """Evaluations with some part violated, per grid point: shape (κ, ε)."""
    return (verdict == 1).any(axis=-1).sum(axis=-1)


def alerts(verdict: np.ndarray) -> np.ndarray:
    """Violation alerts per grid point, as the monitor emits them: a part's verdict turns violated; an undefined one changes nothing."""
    steps = np.arange(verdict.shape[-2])[:, None]
    last = np.maximum.accumulate(np.where(np.isnan(verdict), -1, steps), axis=-2)  # latest defined evaluation so far
    state = np.where(last >= 0, np.take_along_axis(np.nan_to_num(verdict), np.maximum(last, 0), axis=-2), 0.0)
    before = np.concatenate([np.zeros_like(state[..., :1, :]), state[..., :-1, :]], axis=-2)
    return ((state == 1) & (before == 0)).sum(axis=(-2, -1))


def ratio_label(top: int, bottom: int) -> str:
    """A trigger ratio as text: `6.37×`, or the counts themselves (`25/0`, `0/0`) when the ratio is infinite or undefined.

    >>> ratio_label(363, 57), ratio_label(25, 0)
    ('6.37×', '25/0')
    """
    return f"{top / bottom:.3g}×" if bottom else f"{top}/0"


@dataclass(frozen=True)
class Tuning:
    """Trigger statistics per algorithm and grid point, summed over the scenarios; arrays have shape (algorithms, κ, ε)."""

    scenarios: int
    applicants: int
    metric: str
    """The tuned spec's metric type."""
    algorithms: tuple[str, ...]
    kappas: tuple[float, ...]
    epsilons: tuple[float, ...]
    triggers: np.ndarray
    """Evaluations with a violated verdict in some seminar."""
    alerts: np.ndarray
    """Violation alerts (a seminar's verdict turning violated)."""
    flagged: np.ndarray
    """Scenarios with at least one violation alert."""
    evaluations: tuple[int, ...]
    """Evaluations per algorithm, over all scenarios."""

    def ratio(self) -> np.ndarray:
        """Randomize's triggers over EqualGender's per grid point: inf where only EqualGender has none, NaN where neither has any."""
        top = self.triggers[self.algorithms.index(UNFAIR)].astype(float)
        bottom = self.triggers[self.algorithms.index(FAIR)].astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return top / bottom

    def point(self, kappa: float, epsilon: float) -> tuple[int, int] | None:
        """Indices of a grid point, or None when it is not in the grid."""
        if kappa not in self.kappas or epsilon not in self.epsilons:
            return None
        return self.kappas.index(kappa), self.epsilons.index(epsilon)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; ratios that are infinite or undefined become null."""
        return {
            "scenarios": self.scenarios,
            "applicants": self.applicants,
            "metric": self.metric,
            "kappas": list(self.kappas),
            "epsilons": list(self.epsilons),
            "algorithms": {
                name: {
                    "evaluations": self.evaluations[a],
                    "triggers": self.triggers[a].tolist(),
                    "alerts": self.alerts[a].tolist(),
                    "flagged_scenarios": self.flagged[a].tolist(),
                }
                for a, name in enumerate(self.algorithms)
            },
            f"{UNFAIR}/{FAIR}": [[float(x) if np.isfinite(x) else None for x in row] for row in self.ratio()],
        }


def run_tuning(
    scenarios: int,
    applicants: int,
    kappas: Sequence[float] = KAPPAS,
    epsilons: Sequence[float] = EPSILONS,
    *,
    spec: str | Path = DEFAULT_SPEC,
    on_run: Callable[[], None] | None = None,
) -> Tuning:
    """Monitor scenarios 0..scenarios-1 (the seeds) of `applicants` applicants under every algorithm with `spec` (a
    point-verdict spec over the seminar streams); `on_run` is called after each run."""
    plan = tuned_plan(spec, confidence=0.0)
    if plan.spec.estimator.verdict != "point":
        raise InputError(f"{spec}: tune recomputes point verdicts from counts; the spec asks for {plan.spec.estimator.verdict} verdicts")
    algorithms = tuple(ALGORITHMS)
    shape = (len(algorithms), len(kappas), len(epsilons))
    total_triggers, total_alerts, flagged = np.zeros(shape, int), np.zeros(shape, int), np.zeros(shape, int)
    evaluations = [0] * len(algorithms)
    for a, algorithm in enumerate(algorithms):
        for seed in range(scenarios):
            counts = counts_of(monitor_records(plan, seminar_events(algorithm, seed, applicants)))
            verdict = verdicts(counts, kappas, epsilons, plan.monitor.judging.min_trials)
            found = alerts(verdict)
            total_triggers[a] += triggers(verdict)
            total_alerts[a] += found
            flagged[a] += found > 0
            evaluations[a] += len(counts.prior)
            if on_run is not None:
                on_run()
    return Tuning(
        scenarios, applicants, plan.spec.metric.type, algorithms, tuple(kappas), tuple(epsilons), total_triggers, total_alerts, flagged, tuple(evaluations)
    )
