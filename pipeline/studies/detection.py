"""False alarms and detection delay of the hiring monitor under each verdict mode: point, confident, anytime.

The same seeded streams go through the monitor once per mode. On fair streams (both genders hired with
probability 0.5) every violation alert is a false alarm; on unfair ones (0.5 vs. 0.2) the delay is the
number of decisions until the first alert. Point verdicts compare the MAP gap with ε after every decision
and fire on noise; a confident verdict holds at level α at one fixed time, so its guarantee covers the
last decision, not every look; an anytime verdict holds at level α however often it is read.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.spec.plan import Plan
from fairstream.studies.hiring import FAIR, UNFAIR, Run, hiring_plan, summarize_run
from fairstream.studies.runs import monitor_records
from fairstream.verdicts.judge import Mode

MODES: tuple[Mode, ...] = ("point", "confident", "anytime")

Scenario = tuple[float, float]
"""Hire probabilities (male, female) of a stream: `FAIR` or `UNFAIR`."""

PRIOR = 0.5
"""Prior mean of each gender's hire rate, as in the hiring spec."""


@dataclass(frozen=True)
class ModeSummary:
    """One verdict mode over every seed: false alarms on the fair streams, detection delay on the unfair ones."""

    mode: Mode
    seeds: int
    fair_alarmed: int
    """Fair runs with at least one violation alert."""
    fair_violated_at_end: int
    """Fair runs whose verdict is violated at the last decision (the fixed horizon)."""
    unfair_missed: int
    """Unfair runs without any violation alert."""
    delay_median: float | None
    delay_p10: float | None
    delay_p90: float | None
    """Decisions until the first violation alert, over the unfair runs that raise one (linear interpolation); None when none does."""

    @property
    def false_alarm_rate(self) -> float:
        return self.fair_alarmed / self.seeds

    @property
    def false_alarm_rate_at_end(self) -> float:
        return self.fair_violated_at_end / self.seeds


@dataclass(frozen=True)
class DetectionStudy:
    """The settings of the study and one summary per verdict mode, in the order of `MODES`."""

    seeds: int
    decisions: int
    confidence: float
    threshold: float
    alpha: float
    modes: tuple[ModeSummary, ...]


def summarize_mode(mode: Mode, fair: Sequence[Run], unfair: Sequence[Run]) -> ModeSummary:
    """Condense one mode's runs (one fair and one unfair run per seed)."""
    delays = [run.first_trigger for run in unfair if run.first_trigger is not None]
    p10, median, p90 = (float(q) for q in np.percentile(delays, [10, 50, 90])) if delays else (None, None, None)
    return ModeSummary(
        mode=mode,
        seeds=len(fair),
        fair_alarmed=sum(run.triggers > 0 for run in fair),
        fair_violated_at_end=sum(run.onset is not None for run in fair),
        unfair_missed=len(unfair) - len(delays),
        delay_median=median,
        delay_p10=p10,
        delay_p90=p90,
    )


def run_detection(
    seeds: int,
    decisions: int,
    *,
    confidence: float = 24.0,
    threshold: float = 0.1,
    alpha: float = 0.05,
    workers: int = 1,
    on_run: Callable[[Mode, Run], None] | None = None,
) -> DetectionStudy:
    """Monitor a fair and an unfair stream of `decisions` decisions for each seed in 0..seeds-1 under every mode.

    Intervals are the default for κ (beta when κ > 0, wilson at κ = 0). `workers` > 1 spreads the seeds over
    that many processes; the result is the same. `on_run` sees each finished run with its mode, seed by seed.
    """
    plans = {mode: hiring_plan(confidence=confidence, threshold=threshold, prior=PRIOR, verdict=mode, alpha=alpha) for mode in MODES}
    runs: dict[tuple[Mode, Scenario], list[Run]] = {(mode, scenario): [] for mode in MODES for scenario in (FAIR, UNFAIR)}
    with _seed_mapper(workers) as map_seeds:
        for seed_runs in map_seeds(partial(_monitor_seed, plans, decisions), range(seeds)):
            for mode, scenario, run in seed_runs:
                runs[mode, scenario].append(run)
                if on_run is not None:
                    on_run(mode, run)
    summaries = tuple(summarize_mode(mode, runs[mode, FAIR], runs[mode, UNFAIR]) for mode in MODES)
    return DetectionStudy(seeds, decisions, confidence, threshold, alpha, summaries)


def _monitor_seed(plans: dict[Mode, Plan], decisions: int, seed: int) -> list[tuple[Mode, Scenario, Run]]:
    """Every mode's run over the seed's fair and unfair streams."""
    seed_runs = []
    for scenario in (FAIR, UNFAIR):
        events = hiring_decisions(decisions, *scenario, seed=seed)
        seed_runs.extend((mode, scenario, summarize_run(seed, monitor_records(plan, events))) for mode, plan in plans.items())
    return seed_runs


@contextmanager
def _seed_mapper(workers: int) -> Iterator[Callable[..., Iterable[Any]]]:
    """An ordered `map`: the built-in one, or a pool of fresh (spawned) processes."""
    if workers == 1:
        yield map
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool.map
