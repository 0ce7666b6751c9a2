"""The per-monitor merge: waits until every bucket has reported a tick, applies the deltas in event-time order, and hands each evaluation to `Evaluation` (pure)."""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from fairstream.estimators.rate import Rate
from fairstream.estimators.scores import ScoreCounts
from fairstream.language.expressions import Expression
from fairstream.records.chain import RecordChain
from fairstream.records.errors import EvaluationError
from fairstream.records.timefmt import format_duration, format_instant
from fairstream.trials.bucket import FINISHED, Report
from fairstream.trials.outcomes import UNLISTED, SlotOutcomes, TickDelta, TrialOutcome
from fairstream.verdicts.anytime import AnytimeEvidence, opened_later
from fairstream.verdicts.budget import Family, MonitorBudget
from fairstream.verdicts.constraints import ConstraintRule
from fairstream.verdicts.evaluation import Evaluation
from fairstream.verdicts.judge import VerdictRule
from fairstream.verdicts.tracked import TrackedGroups, unlisted_total


@dataclass(frozen=True)
class MonitorConfig:
    """What the merge needs from the spec."""

    name: str
    metric: str
    rule: VerdictRule
    prior: float | Expression
    confidence: float
    tick: int
    on_close: bool
    reporters: int
    """How many reporters a tick waits for: the trial buckets, or the input partitions where trials are kept as they are read."""
    interval: str = "wilson"
    bounds: str = "student_t"
    outcome_range: tuple[float, float] | None = None
    discount: float = 1.0
    """Benefit rates (ELBERT): the t-th evaluation tick of an episode (the run, or a periodic window) weighs discount^t."""
    recency: float = 1.0
    """Benefit rates: the supply and demand summed so far keep this share at every tick (a recency average)."""
    min_trials: int = 1
    min_cell: int = 1
    """Cells with fewer trials are published suppressed (see `suppress_small_cells`); verdicts use every cell."""
    window: Literal["cumulative", "sliding", "periodic"] = "cumulative"
    window_length: int = 0
    window_by: Literal["closed", "opened"] = "closed"
    """Which time of a closed trial a sliding or periodic window selects on (by opened: trials come one by one)."""
    max_ticks: int = 1_000_000
    """The most evaluations one advance of the watermark may ask for (each writes an estimate, all held at once)."""
    estimates: bool = True
    constraints: tuple[ConstraintRule, ...] = ()
    """Delayed impact: ELF's per-group constraints, each its own part with one alert per group it cannot certify."""
    gap_verdict: bool = True
    """Whether the gap between groups is judged (delayed impact with constraints may leave the threshold out)."""
    slot_outcomes: SlotOutcomes | None = field(default=None, compare=False)
    """Turns the slot tuples buckets count closed trials by into cells (see `TickDelta.unsettled`)."""
    part_estimators: dict[str, tuple[float | Expression | None, float | None]] = field(default_factory=dict)
    """Per part (or part name before a stratum's brackets): its own prior mean and κ, None where the spec's hold."""
    family: Family = "monitor"
    """Whether α covers every part of the monitor (split evenly) or each part has the whole α (see `MonitorBudget`)."""
    declared_parts: int | None = 1
    """Parts judged against the threshold, where the metric fixes them; None where the data does (strata)."""
    declared_pairs: int | None = None
    """Pairs of groups per part where the spec lists groups or pairs; None with `groups: all`."""
    max_groups: int = 256
    """Groups a part tracks at most; the trials of further groups are counted, not estimated (see `TrackedGroups`)."""
    declared_groups: int | None = None
    """Groups where the spec lists them: a constraint's δ is split evenly over them (else by the schedule)."""
    label_horizon: int | None = None
    """trial.close_after: under anytime verdicts the published rates count the trials opened at least this long ago."""
    listed_groups: tuple[str, ...] | None = None
    """The spec's `metric.groups` where it lists them: one no trial carries is named with the values seen instead."""
    spec_sha256: str = ""
    """The sha256 of the spec's text, which every record names in its chain."""
    median: float | None = None
    """A scoring rate's fixed cut (metric.median); None with a scoring rate: the running median of the scores counted."""

    @property
    def threshold(self) -> float:
        return self.rule.threshold

    partly_seen: bool = False
    """Whether the metric's label is seen only for some trials: its rates are bounded, or weighted by propensities."""
    weighted: bool = False
    """Whether partly seen labels come with propensities (an inverse-propensity-weighted estimate per group)."""

    @property
    def measures(self) -> bool:
        """Whether the metric compares sums of numbers (mean outcomes, benefit rates, partly seen rates) rather than
        plain rates of events."""
        return self.metric in ("delayed_impact", "benefit_rate") or self.partly_seen

    @property
    def bet_epsilon(self) -> float:
        """The threshold on the scale the betting tests see: rates as they are, mean outcomes rescaled to [0, 1]."""
        if self.metric == "delayed_impact" and self.outcome_range is not None:
            return self.threshold / (self.outcome_range[1] - self.outcome_range[0])
        return self.threshold

    @property
    def opening_order(self) -> bool:
        """Whether closed trials reach the anytime tests in opening order, so the reporters say how far that order is final."""
        return self.rule.mode == "anytime"

    def budget(self) -> MonitorBudget:
        return MonitorBudget(self.rule.alpha, self.family, self.declared_parts, self.declared_pairs)

    @property
    def running_median(self) -> bool:
        """A scoring rate against the median of the scores counted so far: trials are counted by their score."""
        return self.metric == "scoring_rate" and self.median is None

    @property
    def needs_trials(self) -> bool:
        """Whether buckets must send closed trials one by one (verdict per trial, betting in close order, a window that
        selects trials by when they opened, or scores counted one by one for a running median)."""
        return self.on_close or self.rule.mode == "anytime" or (self.window != "cumulative" and self.window_by == "opened") or self.running_median


@dataclass
class Monitor:
    """Per-group counts of closed trials for every part of the metric, betting tests, and the alert state."""

    config: MonitorConfig
    progress: dict[int, int] = field(default_factory=dict)
    pending: dict[int, TickDelta] = field(default_factory=dict)
    rates: dict[str, dict[str, Rate]] = field(default_factory=dict)
    sums: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    totals: dict[str, float] = field(default_factory=dict)
    closed: int = 0
    incomplete: int = 0
    unmatched: int = 0
    unfinished: int = 0
    evicted: int = 0
    next_tick: int | None = None
    end: int | None = None
    """The last tick the ended input's watermark reaches (see `Report.end`)."""
    history: deque[tuple[int, TickDelta]] = field(default_factory=deque)
    opened: list[tuple[int, str, TrialOutcome]] = field(default_factory=list)
    """Windows by opened time: the counted trials as a heap on (opened_at, key), the first to leave on top."""
    period_start: int | None = None
    """Periodic windows by opened time: the instant the current period began (its trials opened after it)."""
    weight: float = 1.0
    """discount^t of the coming tick, t counted from the episode's first (see `MonitorConfig.discount`)."""
    started: int | None = None
    """The first instant counted (a tick, or a trial's close): baseline constraints measure their length from it."""
    baselines: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    """Per baseline length: each group's mean-outcome sums when the baseline ended, its τ from then on."""
    idle: set[int] = field(default_factory=set)
    """Reporters whose input partition is quiet for now: the merge does not wait for them (see `Report.idle`)."""
    verdicts: Evaluation | None = None
    """The alert state and error budgets the evaluations judge these counts with."""
    anytime: AnytimeEvidence | None = None
    """Anytime verdicts: the betting tests and confidence sequences, fed in opening order."""
    groups: TrackedGroups | None = None
    """The groups each part tracks (at most `max_groups`), and the trials of those it does not."""
    ended: bool = False
    """The input has ended and been evaluated to its end."""
    chain: RecordChain | None = None
    """The hash chain of this monitor's records (see `records.chain`)."""
    scores: ScoreCounts | None = None
    """A scoring rate against the running median: each group's scores, turned into rates at each evaluation."""
    first_opening: int | None = None
    """The event time of the first event of an opening kind (the first decision) any reporter received."""

    def __post_init__(self) -> None:
        config = self.config
        if self.verdicts is None:
            self.verdicts = Evaluation(config)
        if self.groups is None:
            self.groups = TrackedGroups(config.name, config.max_groups)
        if self.chain is None:
            self.chain = RecordChain(f"monitor/{config.name}", config.spec_sha256)
        if self.scores is None and config.running_median:
            self.scores = ScoreCounts()
        if self.anytime is None and config.opening_order:
            self.anytime = AnytimeEvidence(
                config.bet_epsilon, config.measures, config.gap_verdict, config.outcome_range, config.constraints, ratio=config.rule.ratio,
                horizon=config.label_horizon,
            )

    def receive(self, report: Report) -> list[dict[str, Any]]:
        """Take one reporter's report (and ownership of it); return the records of every evaluation that is now final.

        A reporter is a trial bucket, or an input partition whose trials are kept where it is read.
        """
        self.progress[report.bucket] = max(report.through, self.progress.get(report.bucket, report.through))
        if self.anytime is not None:
            self.anytime.oldest_open[report.bucket] = report.oldest_open
        if report.idle:
            self.idle.add(report.bucket)
        else:
            self.idle.discard(report.bucket)
        for tick, delta in report.deltas.items():  # the monitor takes ownership of the report's deltas
            if self.next_tick is not None and tick < self.next_tick and not self.config.on_close:
                tick = self.next_tick  # closed in a tick already evaluated (a tailed partition back from idle): counted at the next one, not lost
            merged = self.pending.get(tick)
            if merged is None:
                self.pending[tick] = delta
            else:
                merged += delta
            if self.anytime is not None:
                self.anytime.note_pending(tick, delta)
        if report.first_opening is not None and (self.first_opening is None or report.first_opening < self.first_opening):
            self.first_opening = report.first_opening
        self.unmatched += report.unmatched
        self.unfinished += report.unfinished
        self.evicted += report.evicted
        if report.end is not None:
            self.end = report.end if self.end is None else max(self.end, report.end)
        if len(self.progress) < self.config.reporters or len(self.idle) == len(self.progress):
            return []
        final = min(through for reporter, through in self.progress.items() if reporter not in self.idle)
        ending = final == FINISHED
        if ending:  # every tick with closed trials, and every tick the input's event time reached
            final = max((*self.pending, -FINISHED if self.end is None else self.end))
        records = self._on_close(final) if self.config.on_close else self._every_tick(final)
        if ending and not self.ended and self.end is not None and self.closed == 0 and self.incomplete == 0 and not records:
            records = self.verdicts.records(self, self.end)  # type: ignore[union-attr]  # no trial closed: the counts (evicted, unfinished) are still published
        linked = self.chain.link_all(records)  # type: ignore[union-attr]
        if ending and not self.ended:  # the input has ended: the chain is closed
            linked.append(self.chain.seal(final=True))  # type: ignore[union-attr]
        self.ended = self.ended or ending
        return linked

    def _every_tick(self, final: int) -> list[dict[str, Any]]:
        if self.next_tick is None:
            ready = [tick for tick in self.pending if tick <= final]
            if not ready:
                return []
            self.next_tick = min(ready)
        records: list[dict[str, Any]] = []
        tick = self.next_tick
        due = (final - tick) // self.config.tick + 1
        if due > self.config.max_ticks:
            raise EvaluationError(
                f"monitor {self.config.name}: event time moved from {format_instant(tick)} to {format_instant(final)}: "
                f"{due:,} evaluations of every {format_duration(self.config.tick)} at once, more than evaluate.max_ticks = "
                f"{self.config.max_ticks:,}; evaluate less often (evaluate.every), raise evaluate.max_ticks, or bound how far one "
                "event may move time (input.max_ahead makes such events dead letters)"
            )
        while tick <= final:
            self._expire(tick)
            self._take_baselines(tick)
            delta = self.pending.pop(tick, None)
            if delta is not None:
                self._apply(tick, delta)
            if self.anytime is not None:
                self.anytime.applied(tick)
                self.anytime.release(self.anytime.frontier(tick), self.baselines)
            records.extend(self._evaluated(tick))
            self.weight *= self.config.discount
            if self.config.window == "periodic" and tick % self.config.window_length == 0:
                self.rates.clear()
                self.sums.clear()
                if self.scores is not None:
                    self.scores.clear()
                self.weight = 1.0  # a new episode
                self.period_start = tick
            if self.config.recency < 1:
                for groups in self.sums.values():
                    for cell in groups.values():
                        cell[0] *= self.config.recency
                        cell[1] *= self.config.recency
            tick += self.config.tick
        self.next_tick = tick
        return records

    def _on_close(self, final: int) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        for tick in sorted(tick for tick in self.pending if tick <= final):
            delta = self.pending.pop(tick)
            if self.anytime is not None:
                self.anytime.applied(tick)
            trials = sorted(delta.trials, key=lambda trial: (trial.closed_at, trial.key))
            later = opened_later(trials)
            for index, trial in enumerate(trials):
                self._take_baselines(trial.closed_at)
                self._apply_trial(trial)
                if self.anytime is not None:
                    self.anytime.release(self.anytime.frontier(trial.closed_at, later[index + 1]), self.baselines)
                records.extend(self._evaluated(trial.closed_at, trial.key))
        return records

    def _evaluated(self, instant: int, key: str | None = None) -> list[dict[str, Any]]:
        """The records of one evaluation; a scoring rate against the running median first draws its counts from the scores."""
        if self.scores is not None:
            self.rates["scoring_rate"] = self.scores.draw_rates()
        return self.verdicts.records(self, instant, key)  # type: ignore[union-attr]

    def _apply(self, tick: int, delta: TickDelta) -> None:
        if self.config.needs_trials:
            by_opened = self.config.window != "cumulative"  # windows with trials one by one select them by opened time
            for trial in sorted(delta.trials, key=lambda trial: (trial.closed_at, trial.key)):
                if by_opened and not self._opened_inside(trial, tick):
                    self.closed += 1  # closed, but opened before the window's span: counted in no group
                    self.incomplete += trial.cells is None
                    continue
                self._apply_trial(trial)
                if by_opened and self.config.window == "sliding":
                    heapq.heappush(self.opened, (trial.opened_at, trial.key, trial))  # type: ignore[arg-type]
            return
        if delta.unsettled:
            delta.settle(self.config.slot_outcomes)  # type: ignore[arg-type]
        self._count(delta, sign=1)
        self.closed += delta.closed
        self.incomplete += delta.incomplete
        self._add_totals(delta.totals)
        if self.config.window == "sliding":
            self.history.append((tick, delta))

    def _count(self, delta: TickDelta, sign: int) -> None:
        tracked = self.groups.admit(delta.counts)  # type: ignore[union-attr]
        if self.config.measures:
            weight = sign * self.weight  # below 1 only for discounted benefit rates, whose numbers are (supply, demand, trials)
            for (part, group), numbers in delta.counts.items():
                if (part, group) not in tracked:
                    self.groups.miss(part, group, round(sign * numbers[-1]))  # type: ignore[union-attr]
                    continue
                cell = self.sums.setdefault(part, {}).setdefault(group, [0.0] * len(numbers))
                for index, number in enumerate(numbers[:-1]):
                    cell[index] += weight * number
                cell[-1] += sign * numbers[-1]
            return
        for (part, group), (hits, trials) in delta.counts.items():
            if (part, group) not in tracked:
                self.groups.miss(part, group, sign * trials)  # type: ignore[union-attr]
                continue
            rate = self.rates.setdefault(part, {}).setdefault(group, Rate())
            rate.hits += sign * hits
            rate.trials += sign * trials

    def _take_baselines(self, instant: int) -> None:
        """Keep each group's mean-outcome sums as they stand when a baseline constraint's length has passed."""
        if self.started is None:
            self.started = instant
        for rule in self.config.constraints:
            if rule.baseline is not None and rule.baseline not in self.baselines and instant >= self.started + rule.baseline:
                self.baselines[rule.baseline] = {group: list(cell) for group, cell in self.sums.get("mean_outcome", {}).items()}

    def _expire(self, tick: int) -> None:
        """Sliding windows: take out the trials that closed (or, by opened, opened) `window_length` or longer before `tick`."""
        while self.history and self.history[0][0] <= tick - self.config.window_length:
            self._count(self.history.popleft()[1], sign=-1)
        while self.opened and self.opened[0][0] <= tick - self.config.window_length:
            self._remove_trial(heapq.heappop(self.opened)[2])

    def _opened_inside(self, trial: TrialOutcome, tick: int) -> bool:
        """Whether a trial closing by `tick` opened within the window's span: the last `window_length` (sliding) or the
        current period (periodic)."""
        if self.config.window == "sliding":
            return trial.opened_at > tick - self.config.window_length  # type: ignore[operator]
        return self.period_start is None or trial.opened_at > self.period_start  # type: ignore[operator]

    def _remove_trial(self, trial: TrialOutcome) -> None:
        """Take a trial's cells and totals out again (a sliding window by opened time moved past it); it stays closed."""
        if trial.cells is not None:
            for part, group, value in trial.cells:
                if self.scores is not None and group in self.scores.counts:
                    self.scores.add(group, value[0], -1)  # type: ignore[index]
                    continue
                if group not in (self.sums if self.config.measures else self.rates).get(part, {}):
                    self.groups.miss(part, group, -1)  # type: ignore[union-attr]
                    continue
                if self.config.measures:
                    cell = self.sums[part][group]
                    for index, number in enumerate(value):  # type: ignore[arg-type]
                        cell[index] -= number
                    cell[-1] -= 1
                else:
                    self.rates[part][group].revert(bool(value))
        for name, value in trial.totals.items():
            if not name.startswith(UNLISTED):  # trials outside the listed groups are counted since the run began
                self.totals[name] -= value

    def _apply_trial(self, trial: TrialOutcome) -> None:
        self.closed += 1
        cells = trial.cells
        if cells is None:
            self.incomplete += 1
        else:
            tracked = self.groups.admit((part, group) for part, group, _ in cells)  # type: ignore[union-attr]
            for part, group, _ in cells:
                if (part, group) not in tracked:
                    self.groups.miss(part, group, 1)  # type: ignore[union-attr]
            cells = [cell for cell in cells if (cell[0], cell[1]) in tracked]
        if cells and self.scores is not None:
            for _part, group, score in cells:
                self.scores.add(group, score[0])  # type: ignore[index]
        elif cells and self.config.measures:
            for part, group, numbers in cells:
                cell = self.sums.setdefault(part, {}).setdefault(group, [0.0] * (len(numbers) + 1))  # type: ignore[arg-type]
                for index, number in enumerate(numbers):  # type: ignore[arg-type]
                    cell[index] += number
                cell[-1] += 1
        elif cells:
            for part, group, hit in cells:
                self.rates.setdefault(part, {}).setdefault(group, Rate()).update(hit)
        if self.anytime is not None and cells is not None:
            self.anytime.hold(trial, cells)
        self._add_totals(trial.totals)

    def _add_totals(self, totals: dict[str, float]) -> None:
        """Add a trial's or a tick's aggregate contributions (unlisted group values bounded, see `unlisted_total`; in name
        order, so which values are counted one by one does not depend on the order reports merged in)."""
        for name, value in sorted(totals.items()):
            name = unlisted_total(self.totals, name)
            self.totals[name] = self.totals.get(name, 0.0) + value

