"""False alarms and detection onset of the hiring monitor over seeded fair and unfair synthetic streams.

For each seed the monitor flow runs in this process over a fair stream (both genders hired with
probability 0.5) and an unfair one (0.5 vs. 0.2), as in the RTLola hiring experiment: the fair runs
show how often the monitor fires without cause, the unfair runs from which decision on the verdict
stays violated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fairstream.compiler.plan import Plan
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.lab.studies.runs import monitor_records, tuned_plan
from fairstream.paths import SPECS_DIR
from fairstream.records.envelope import ESTIMATE, VIOLATION
from fairstream.verdicts.judge import Mode

SPEC_PATH = SPECS_DIR / "hiring_demographic_parity.yaml"

FAIR = (0.5, 0.5)
UNFAIR = (0.5, 0.2)
"""Hire probabilities (male, female) of the two scenarios."""

PART = "selection_rate"
"""The part of the estimates that demographic parity compares."""


def hiring_plan(
    *,
    confidence: float,
    threshold: float,
    prior: float,
    verdict: Mode = "point",
    alpha: float = 0.05,
    interval: str | None = None,
    groups: list[str] | None = None,
    path: Path = SPEC_PATH,
) -> Plan:
    """The bundled hiring spec with its estimator, threshold and (when given) groups replaced; `interval` None is the
    default for κ (beta when κ > 0)."""
    return tuned_plan(path, threshold=threshold, groups=groups, confidence=confidence, prior=prior, verdict=verdict, alpha=alpha, interval=interval)


@dataclass(frozen=True)
class Run:
    """One monitored stream: its violation alerts and when the verdict turned and settled (1-based decision counts)."""

    seed: int
    triggers: int
    first_trigger: int | None
    onset: int | None
    """The decision from which every verdict to the end is violated; None when the last one is not."""


def summarize_run(seed: int, records: list[dict[str, Any]]) -> Run:
    """Condense one run's records; decisions are counted by the closed trials at each evaluation."""
    estimates = [record for record in records if record["type"] == ESTIMATE]
    decision_at = {record["event_time"]: record["trials"]["closed"] for record in estimates}
    triggers = [decision_at[record["event_time"]] for record in records if record["type"] == VIOLATION]
    onset = None
    for record in reversed(estimates):
        if record["parts"][PART]["violated"] is not True:
            break
        onset = record["trials"]["closed"]
    return Run(seed, len(triggers), min(triggers, default=None), onset)


@dataclass(frozen=True)
class Summary:
    """What the study shows: false alarms on fair streams, and how soon unfair ones are flagged for good."""

    seeds: int
    fair_triggered: int
    """Fair runs with at least one violation alert."""
    fair_ended_violated: int
    """Fair runs whose verdict is still violated at the last decision."""
    unfair_settled: int
    """Unfair runs whose verdict is violated from some decision to the end."""
    onset_median: float | None
    onset_p10: float | None
    onset_p90: float | None
    onset_max: int | None
    """None when some unfair run never settles."""
    first_trigger_median: float | None
    """Over the unfair runs with a trigger."""


@dataclass(frozen=True)
class HiringStudy:
    """Every run of the study, by scenario, and the summary over them."""

    decisions: int
    fair: tuple[Run, ...]
    unfair: tuple[Run, ...]
    summary: Summary


def summarize(fair: Sequence[Run], unfair: Sequence[Run]) -> Summary:
    """Summary statistics over the runs; onset quantiles cover the unfair runs that settled (linear interpolation)."""
    onsets = [run.onset for run in unfair if run.onset is not None]
    firsts = [run.first_trigger for run in unfair if run.first_trigger is not None]
    p10, median, p90 = (float(q) for q in np.percentile(onsets, [10, 50, 90])) if onsets else (None, None, None)
    return Summary(
        seeds=len(fair),
        fair_triggered=sum(run.triggers > 0 for run in fair),
        fair_ended_violated=sum(run.onset is not None for run in fair),
        unfair_settled=len(onsets),
        onset_median=median,
        onset_p10=p10,
        onset_p90=p90,
        onset_max=max(onsets) if len(onsets) == len(unfair) and onsets else None,
        first_trigger_median=float(np.median(firsts)) if firsts else None,
    )


def run_study(plan: Plan, seeds: int, decisions: int, on_run: Callable[[Run], None] | None = None) -> HiringStudy:
    """Monitor a fair and an unfair stream of `decisions` decisions for each seed in 0..seeds-1; `on_run` sees each finished run."""
    results: dict[tuple[float, float], list[Run]] = {FAIR: [], UNFAIR: []}
    for seed in range(seeds):
        for scenario, runs in results.items():
            events = hiring_decisions(decisions, *scenario, seed=seed)
            run = summarize_run(seed, monitor_records(plan, events))
            runs.append(run)
            if on_run is not None:
                on_run(run)
    fair, unfair = tuple(results[FAIR]), tuple(results[UNFAIR])
    return HiringStudy(decisions, fair, unfair, summarize(fair, unfair))
