"""False alarms and detection delay of the hiring monitor under each verdict mode, against an oracle.

The same seeded streams go through the monitor once per mode, at each ratio of group sizes. On fair streams (both
genders hired with probability 0.5) every violation alert is a false alarm; on unfair ones (0.5 vs. 0.2) the delay is
the number of decisions until the first alert. Point verdicts compare the MAP gap with ε after every decision and
fire on noise; a confident verdict holds at level α at one fixed time, so its guarantee covers the last decision, not
every look; an anytime verdict holds at level α however often it is read.

The oracle knows the effect size: a fixed-sample two-sided z test of the gap against ε at level α (α/2 a side) that
reaches power 0.8 needs `oracle_decisions` decisions; a sequential monitor that knows nothing pays for not knowing.
The spec declares the two genders, so the monitor tests its one pair at the whole α, as the oracle does.
"""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from scipy import stats

from fairstream.compiler.plan import Plan
from fairstream.connectors.synthetic.hiring import GENDERS, hiring_decisions
from fairstream.lab.studies.hiring import FAIR, UNFAIR, Run, hiring_plan, summarize_run
from fairstream.lab.studies.runs import median_interval, monitor_records, standard_error
from fairstream.verdicts.judge import Mode

MODES: tuple[Mode, ...] = ("point", "confident", "anytime")
RATIOS: tuple[tuple[int, int], ...] = ((1, 1), (1, 4), (1, 9))
"""Group sizes male : female."""
POWER = 0.8

Scenario = tuple[float, float]
"""Hire probabilities (male, female) of a stream: `FAIR` or `UNFAIR`."""

PRIOR = 0.5
"""Prior mean of each gender's hire rate, as in the hiring spec."""


def oracle_decisions(rates: Scenario, share: float, threshold: float, alpha: float, power: float = POWER) -> float:
    """Decisions a fixed-sample z test of gap ≤ ε (two-sided, α/2 a side) needs for `power` at the true rates.

    n = (z_{1−α/2} + z_{power})² · (p_a(1 − p_a)/s + p_b(1 − p_b)/(1 − s)) / (|p_a − p_b| − ε)², s the first group's share.

    >>> round(oracle_decisions((0.5, 0.2), 0.5, 0.1, 0.05))
    161
    """
    (p_a, p_b), effect = rates, abs(rates[0] - rates[1]) - threshold
    if effect <= 0:
        raise ValueError(f"the gap {abs(p_a - p_b):g} is not beyond the threshold {threshold:g}: no test has power there")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return float(z**2 * (p_a * (1 - p_a) / share + p_b * (1 - p_b) / (1 - share)) / effect**2)


@dataclass(frozen=True)
class ModeSummary:
    """One verdict mode at one ratio of group sizes over every seed: false alarms on fair streams, delay on unfair ones."""

    mode: Mode
    ratio: tuple[int, int]
    seeds: int
    fair_alarmed: int
    """Fair runs with at least one violation alert."""
    fair_violated_at_end: int
    """Fair runs whose verdict is violated at the last decision (the fixed horizon)."""
    unfair_missed: int
    """Unfair runs without any violation alert."""
    delay_median: float
    delay_p10: float
    delay_p90: float
    """Decisions until the first violation alert over every unfair run, a run that raises none counting as later than
    its last decision (math.inf): so a quantile is inf when more runs than its share went undetected."""
    oracle: float
    """Decisions the oracle z test needs (see `oracle_decisions`)."""
    delay_median_range: tuple[float, float] = (math.nan, math.nan)
    """A 95 % distribution-free interval for the median delay (see `median_interval`): its Monte Carlo error."""

    @property
    def false_alarm_rate(self) -> float:
        return self.fair_alarmed / self.seeds

    @property
    def false_alarm_rate_at_end(self) -> float:
        return self.fair_violated_at_end / self.seeds

    @property
    def false_alarm_error(self) -> float:
        """The Monte Carlo standard error of the false-alarm rate."""
        return standard_error(self.false_alarm_rate, self.seeds)

    @property
    def false_alarm_error_at_end(self) -> float:
        return standard_error(self.false_alarm_rate_at_end, self.seeds)

    @property
    def delay_over_oracle(self) -> float:
        return self.delay_median / self.oracle

    @property
    def delay_over_oracle_range(self) -> tuple[float, float]:
        return self.delay_median_range[0] / self.oracle, self.delay_median_range[1] / self.oracle


@dataclass(frozen=True)
class DetectionStudy:
    """The settings of the study and one summary per ratio and verdict mode, ratios in the order of `RATIOS`."""

    seeds: int
    decisions: int
    confidence: float
    threshold: float
    alpha: float
    modes: tuple[ModeSummary, ...]


def summarize_mode(mode: Mode, ratio: tuple[int, int], fair: Sequence[Run], unfair: Sequence[Run], oracle: float) -> ModeSummary:
    """Condense one mode's runs at one ratio (one fair and one unfair run per seed)."""
    delays = [math.inf if run.first_trigger is None else run.first_trigger for run in unfair]
    p10, median, p90 = (float(q) for q in np.percentile(delays, [10, 50, 90], method="inverted_cdf"))
    return ModeSummary(
        mode=mode,
        ratio=ratio,
        seeds=len(fair),
        fair_alarmed=sum(run.triggers > 0 for run in fair),
        fair_violated_at_end=sum(run.onset is not None for run in fair),
        unfair_missed=sum(run.first_trigger is None for run in unfair),
        delay_median=median,
        delay_p10=p10,
        delay_p90=p90,
        oracle=oracle,
        delay_median_range=median_interval(delays),
    )


def run_detection(
    seeds: int,
    decisions: int,
    *,
    confidence: float = 24.0,
    threshold: float = 0.1,
    alpha: float = 0.05,
    ratios: Sequence[tuple[int, int]] = RATIOS,
    workers: int = 1,
    on_run: Callable[[Mode, Run], None] | None = None,
) -> DetectionStudy:
    """Monitor a fair and an unfair stream of `decisions` decisions for each seed in 0..seeds-1 and each ratio of group
    sizes under every mode, with the spec's default intervals. `workers` > 1 spreads the seeds over that many processes;
    the result is the same. `on_run` sees each finished run with its mode."""
    plans = {
        mode: hiring_plan(confidence=confidence, threshold=threshold, prior=PRIOR, verdict=mode, alpha=alpha, groups=list(GENDERS))
        for mode in MODES
    }
    summaries = []
    for ratio in ratios:
        share = ratio[0] / sum(ratio)
        runs: dict[tuple[Mode, Scenario], list[Run]] = {(mode, scenario): [] for mode in MODES for scenario in (FAIR, UNFAIR)}
        with _seed_mapper(workers) as map_seeds:
            for seed_runs in map_seeds(partial(_monitor_seed, plans, decisions, share), range(seeds)):
                for mode, scenario, run in seed_runs:
                    runs[mode, scenario].append(run)
                    if on_run is not None:
                        on_run(mode, run)
        oracle = oracle_decisions(UNFAIR, share, threshold, alpha)
        summaries.extend(summarize_mode(mode, tuple(ratio), runs[mode, FAIR], runs[mode, UNFAIR], oracle) for mode in MODES)
    return DetectionStudy(seeds, decisions, confidence, threshold, alpha, tuple(summaries))


def _monitor_seed(plans: dict[Mode, Plan], decisions: int, share: float, seed: int) -> list[tuple[Mode, Scenario, Run]]:
    """Every mode's run over the seed's fair and unfair streams."""
    seed_runs = []
    for scenario in (FAIR, UNFAIR):
        events = hiring_decisions(decisions, *scenario, seed=seed, share_male=share)
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
