"""Verdicts on every close of a batch at once (pure): for point verdicts on the gap of plain rates, each group's
counts after every close of a batch are running sums, so every close's estimates and verdict come from a few array
operations. Where nothing can change between two closes (no verdict turns, no part's standing moves, the cadence
writes nothing), the evaluations in between write nothing either, and only the closes where something may change are
evaluated one by one.

The arrays only find candidates: each candidate is evaluated by `Evaluation.records` itself, so a candidate too many
costs time, never a record. A candidate is every close where, against the close before it, a part's verdict, clear
flag or definedness changes, its highest or lowest group changes or is tied, a part appears, or a cell reaches
`publish.min_cell` (a suppressed pair is named in name order); and the batch's first close.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fairstream.estimators.priors import part_estimator, prior_now
from fairstream.monitoring.cells import RateCells
from fairstream.monitoring.config import MonitorConfig
from fairstream.monitoring.counts import Counts, add_totals
from fairstream.monitoring.quiet import judges_quietly
from fairstream.monitoring.windows import Cumulative
from fairstream.trials.outcomes import UNLABELED, TrialOutcome, hidden

if TYPE_CHECKING:
    import numpy as np


def runs_closes(configs: Sequence[MonitorConfig]) -> bool:
    """Whether closes can be judged a batch at once: verdicts on every close, a cumulative window, and every monitor
    judging the counts point verdicts on the gap of plain rates over every pair, quietly (a publishing cadence)."""
    lead = configs[0]
    return (
        lead.on_close
        and type(lead.counting.cells) is RateCells
        and isinstance(lead.counting.window, Cumulative)
        and all(judges_quietly(config) and config.rule.pairs is None and not config.rule.ratio for config in configs)
    )


@dataclass(frozen=True)
class Columns:
    """Per judged part of a batch: each close's group (-1 where the trial has no cell in the part) and hit."""

    groups: dict[str, list[str]]
    """Per part, its groups in name order: the counted ones and those the batch brings."""
    index: dict[str, np.ndarray]
    hits: dict[str, np.ndarray]


def columns(counts: Counts, trials: Sequence[TrialOutcome]) -> Columns | None:
    """The batch's cells as columns; None where the batch cannot be judged at once (a group beyond `max_groups`,
    unlabeled trials, whose groups some rates withhold)."""
    import numpy as np  # batch judging alone needs it: other monitors start without numpy

    cells: dict[str, list[tuple[int, str, bool]]] = {}
    for position, trial in enumerate(trials):
        for part, group, hit in trial.cells or ():
            if part.startswith(UNLABELED):
                return None
            if not hidden(part):
                cells.setdefault(part, []).append((position, group, hit))
    if any(part.startswith(UNLABELED) for part in counts.rates):
        return None
    groups, index, hits = {}, {}, {}
    limit = counts.config.counting.max_groups
    for part in sorted(set(cells) | {part for part in counts.rates if not hidden(part)}):
        found = cells.get(part, [])
        names = sorted(set(counts.rates.get(part, {})) | {group for _, group, _ in found})
        if len(names) > limit or any(group in counts.groups.untracked.get(part, {}) for group in names):
            return None
        number = {name: place for place, name in enumerate(names)}
        column, hit = np.full(len(trials), -1, dtype=np.int64), np.zeros(len(trials), dtype=np.int64)
        for position, group, value in found:
            column[position], hit[position] = number[group], bool(value)
        groups[part], index[part], hits[part] = names, column, hit
    return Columns(groups, index, hits)


def candidates(configs: Sequence[MonitorConfig], counts: Counts, trials: Sequence[TrialOutcome], batch: Columns) -> np.ndarray:
    """The positions in the batch where some monitor's evaluation may write something (see the module's docstring),
    in order; the first close is always one."""
    import numpy as np

    n = len(trials)
    marks = np.zeros(n, dtype=bool)
    marks[0] = True
    priors = _priors(configs, counts, trials, list(batch.groups))
    for part, names in batch.groups.items():
        known = counts.rates.get(part, {})
        trials_before = np.array([known[name].trials if name in known else 0 for name in names], dtype=np.int64)
        hits_before = np.array([known[name].hits if name in known else 0 for name in names], dtype=np.int64)
        column = batch.index[part]
        present = column >= 0
        added = np.zeros((n, len(names)), dtype=np.int64)
        added[np.flatnonzero(present), column[present]] = 1
        trials_after = trials_before + np.cumsum(added, axis=0)
        scored = np.zeros((n, len(names)), dtype=np.int64)
        scored[np.flatnonzero(present), column[present]] = batch.hits[part][present]
        hits_after = hits_before + np.cumsum(scored, axis=0)
        if part not in counts.rates and present.any():  # the part appears: a new entry in every record's parts
            marks[np.argmax(present)] = True
        for config in configs:
            marks |= _changes(config, priors[config.name][part], trials_after, hits_after)
            marks |= ((trials_after == config.publishing.min_cell) & (added == 1)).any(axis=1)  # a cell comes out of suppression
    return np.flatnonzero(marks)


def _changes(config: MonitorConfig, priors: tuple[np.ndarray, np.ndarray], trials: np.ndarray, hits: np.ndarray) -> np.ndarray:
    """Where a monitor's point verdict on one part may write something, against the close before."""
    import numpy as np

    rule, floor = config.rule, max(1, config.judging.min_trials)
    prior, confidence = priors
    undefined = np.isnan(prior) & (confidence != 0)  # κ = 0 needs no prior (see `point_estimates`)
    prior = np.where(np.isnan(prior), 0.0, prior)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimates = (hits + prior[:, None] * confidence[:, None]) / (trials + confidence[:, None])
    eligible = (trials >= floor) & ~undefined[:, None]
    high = np.where(eligible, estimates, -np.inf).max(axis=1)
    low = np.where(eligible, estimates, np.inf).min(axis=1)
    defined = eligible.sum(axis=1) >= 2
    gap = np.where(defined, high - low, 0.0)
    violated = defined & (gap > rule.threshold)
    clear = defined & (gap <= rule.threshold - rule.hysteresis)
    highest = np.where(eligible, estimates, -np.inf).argmax(axis=1)
    lowest = np.where(eligible, estimates, np.inf).argmin(axis=1)
    tied = defined & (
        ((np.where(eligible, estimates - low[:, None], np.nan) == gap[:, None]).sum(axis=1) != 1)
        | ((np.where(eligible, high[:, None] - estimates, np.nan) == gap[:, None]).sum(axis=1) != 1)
    )
    changed = np.zeros(len(gap), dtype=bool)
    for flags in (violated, clear, defined, highest, lowest):
        changed[1:] |= flags[1:] != flags[:-1]
    changed |= tied
    changed[1:] |= tied[:-1]
    return changed


def _priors(
    configs: Sequence[MonitorConfig], counts: Counts, trials: Sequence[TrialOutcome], parts: list[str]
) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Per monitor and judged part, each close's prior mean (NaN while undefined) and κ: the aggregates after it, as
    `Counts.add_totals` adds them; they move only at closes whose contributions are not all 0.0 on known totals."""
    import numpy as np

    totals = dict(counts.totals)
    starts: list[int] = []
    values: dict[str, dict[str, list[tuple[float | None, float]]]] = {config.name: {part: [] for part in parts} for config in configs}
    for position, trial in enumerate(trials):
        if starts and not (trial.totals and any(value != 0.0 or name not in totals for name, value in trial.totals.items())):
            continue
        add_totals(totals, trial.totals)
        starts.append(position)
        for config in configs:
            prior = prior_now(config.estimation.prior, totals)
            for part in parts:
                values[config.name][part].append(part_estimator(config.estimation.part_estimators, part, prior, config.estimation.confidence, totals))
    lengths = np.diff([*starts, len(trials)])
    return {
        name: {
            part: (
                np.repeat(np.array([np.nan if prior is None else prior for prior, _ in found], dtype=np.float64), lengths),
                np.repeat(np.array([kappa for _, kappa in found], dtype=np.float64), lengths),
            )
            for part, found in by_part.items()
        }
        for name, by_part in values.items()
    }
