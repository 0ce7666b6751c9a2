"""The per-monitor merge: waits until every bucket has reported a tick, applies the deltas in event-time order, and evaluates verdicts (pure)."""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from fairstream.errors import EvaluationError
from fairstream.estimators.betting import GapBet, PairQueue
from fairstream.estimators.intervals import INTERVALS
from fairstream.estimators.means import Mean, hoeffding_bounds, student_t_bounds
from fairstream.estimators.rate import Rate
from fairstream.estimators.sequence import MeanSequence, rescale
from fairstream.spec.expressions import Expression
from fairstream.timefmt import format_instant
from fairstream.trials.bucket import FINISHED, Report
from fairstream.trials.outcomes import SlotOutcomes, TickDelta, TrialOutcome
from fairstream.verdicts.alerts import ESTIMATE, AlertTracker, stamp
from fairstream.verdicts.constraints import ConstraintRule
from fairstream.verdicts.judge import PartVerdict, VerdictRule, compared_pairs, judge
from fairstream.verdicts.publish import suppress_small_cells

STANDARDIZED = "selection_rate[standardized]"
"""The part of conditional statistical parity aggregated over strata (point verdicts)."""


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

    @property
    def threshold(self) -> float:
        return self.rule.threshold

    @property
    def measures(self) -> bool:
        """Whether the metric compares sums of numbers (mean outcomes, benefit rates) rather than rates of events."""
        return self.metric in ("delayed_impact", "benefit_rate")

    @property
    def bet_epsilon(self) -> float:
        """The threshold on the scale the betting tests see: rates as they are, mean outcomes rescaled to [0, 1]."""
        if self.metric == "delayed_impact" and self.outcome_range is not None:
            return self.threshold / (self.outcome_range[1] - self.outcome_range[0])
        return self.threshold

    @property
    def needs_trials(self) -> bool:
        """Whether buckets must send closed trials one by one (verdict per trial, betting in close order, or a window
        that selects trials by when they opened)."""
        return self.on_close or self.rule.mode == "anytime" or (self.window != "cumulative" and self.window_by == "opened")


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
    queues: dict[tuple[str, str, str], PairQueue] = field(default_factory=dict)
    bets: dict[tuple[str, str, str], GapBet] = field(default_factory=dict)
    tracker: AlertTracker = field(default_factory=AlertTracker)
    weight: float = 1.0
    """discount^t of the coming tick, t counted from the episode's first (see `MonitorConfig.discount`)."""
    started: int | None = None
    """The first instant counted (a tick, or a trial's close): baseline constraints measure their length from it."""
    baselines: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    """Per baseline length: each group's mean-outcome sums when the baseline ended, its τ from then on."""
    sequences: dict[tuple[str, str], MeanSequence] = field(default_factory=dict)
    """Anytime verdicts: per constraint part and group, the confidence sequence of its mean outcome."""
    idle: set[int] = field(default_factory=set)
    """Reporters whose input partition is quiet for now: the merge does not wait for them (see `Report.idle`)."""

    def receive(self, report: Report) -> list[dict[str, Any]]:
        """Take one reporter's report (and ownership of it); return the records of every evaluation that is now final.

        A reporter is a trial bucket, or an input partition whose trials are kept where it is read.
        """
        self.progress[report.bucket] = max(report.through, self.progress.get(report.bucket, report.through))
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
        self.unmatched += report.unmatched
        self.unfinished += report.unfinished
        self.evicted += report.evicted
        if report.end is not None:
            self.end = report.end if self.end is None else max(self.end, report.end)
        if len(self.progress) < self.config.reporters or len(self.idle) == len(self.progress):
            return []
        final = min(through for reporter, through in self.progress.items() if reporter not in self.idle)
        if final == FINISHED:  # every tick with closed trials, and every tick the input's event time reached
            final = max((*self.pending, -FINISHED if self.end is None else self.end))
        return self._on_close(final) if self.config.on_close else self._every_tick(final)

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
                f"monitor {self.config.name}: event time jumped from {format_instant(tick)} to {format_instant(final)}, "
                f"{due:,} evaluations at once, more than evaluate.max_ticks = {self.config.max_ticks:,}; "
                "an event dated far ahead? input.max_future and input.max_ahead turn such events into dead letters"
            )
        while tick <= final:
            self._expire(tick)
            self._take_baselines(tick)
            delta = self.pending.pop(tick, None)
            if delta is not None:
                self._apply(tick, delta)
            records.extend(self._evaluate(tick))
            self.weight *= self.config.discount
            if self.config.window == "periodic" and tick % self.config.window_length == 0:
                self.rates.clear()
                self.sums.clear()
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
            for trial in sorted(delta.trials, key=lambda trial: (trial.closed_at, trial.key)):
                self._take_baselines(trial.closed_at)
                self._apply_trial(trial)
                records.extend(self._evaluate(trial.closed_at, trial.key))
        return records

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
        for name, value in delta.totals.items():
            self.totals[name] = self.totals.get(name, 0.0) + value
        if self.config.window == "sliding":
            self.history.append((tick, delta))

    def _count(self, delta: TickDelta, sign: int) -> None:
        if self.config.measures:
            weight = sign * self.weight  # below 1 only for discounted benefit rates, whose numbers are (supply, demand, trials)
            for (part, group), numbers in delta.counts.items():
                cell = self.sums.setdefault(part, {}).setdefault(group, [0.0] * len(numbers))
                for index, number in enumerate(numbers[:-1]):
                    cell[index] += weight * number
                cell[-1] += sign * numbers[-1]
            return
        for (part, group), (hits, trials) in delta.counts.items():
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
                if self.config.measures:
                    cell = self.sums[part][group]
                    for index, number in enumerate(value):  # type: ignore[arg-type]
                        cell[index] -= number
                    cell[-1] -= 1
                else:
                    self.rates[part][group].revert(bool(value))
        for name, value in trial.totals.items():
            self.totals[name] -= value

    def _apply_trial(self, trial: TrialOutcome) -> None:
        self.closed += 1
        if trial.cells is None:
            self.incomplete += 1
        elif self.config.measures:
            for part, group, numbers in trial.cells:
                cell = self.sums.setdefault(part, {}).setdefault(group, [0.0] * (len(numbers) + 1))  # type: ignore[arg-type]
                for index, number in enumerate(numbers):  # type: ignore[arg-type]
                    cell[index] += number
                cell[-1] += 1
                if self.config.rule.mode == "anytime" and part == "mean_outcome":
                    self._follow_mean(group, numbers[0])  # type: ignore[index]
        else:
            for part, group, hit in trial.cells:
                self.rates.setdefault(part, {}).setdefault(group, Rate()).update(hit)
                if self.config.rule.mode == "anytime":
                    self._bet(part, group, float(hit))
        for name, value in trial.totals.items():
            self.totals[name] = self.totals.get(name, 0.0) + value

    def _follow_mean(self, group: str, outcome: float) -> None:
        """Anytime verdicts on mean outcomes: the gap's betting tests on the outcome rescaled to [0, 1], and each
        constraint's confidence sequence (from the end of its baseline)."""
        low, high = self.config.outcome_range  # type: ignore[misc]
        if self.config.gap_verdict:
            self._bet("mean_outcome", group, rescale(outcome, low, high))
        for rule in self.config.constraints:
            if rule.baseline is None or rule.baseline in self.baselines:
                self.sequences.setdefault((rule.part, group), MeanSequence(low, high)).update(outcome)

    def _bet(self, part: str, group: str, outcome: float) -> None:
        """Feed one outcome to the betting test of every pair of groups it belongs to (pairs open when both groups exist)."""
        for other in self.rates[part] if part in self.rates else self.sums[part]:
            if other == group:
                continue
            a, b = sorted((group, other))
            key = (part, a, b)
            if key not in self.bets:
                self.bets[key] = GapBet(self.config.bet_epsilon)
                self.queues[key] = PairQueue()
            for x, y in self.queues[key].push(group == a, outcome):
                self.bets[key].update(x, y)

    def prior(self) -> float | None:
        """The spec's prior mean now (see `_prior_now`)."""
        return self._prior_now(self.config.prior)

    def _prior_now(self, prior: float | Expression | None) -> float | None:
        """A prior mean now: the constant, or the expression over the aggregates clamped to [0, 1] (None while undefined)."""
        if isinstance(prior, Expression):
            value = prior.evaluate(self.totals)
            return None if value is None else min(1.0, max(0.0, float(value)))
        return prior

    def _evaluate(self, instant: int, trial_key: str | None = None) -> list[dict[str, Any]]:
        config = self.config
        prior = self.prior()
        at = () if trial_key is None else (trial_key,)
        parts: dict[str, Any] = {}
        alerts: list[dict[str, Any]] = []
        for part in sorted(self.sums) if config.measures else sorted(self.rates):
            if config.gap_verdict:
                parts[part] = self._measure_part(part) if config.measures else self._part(part, *self._estimator(part, prior))
        for rule in config.constraints:
            parts[rule.part] = self._constraint_part(rule)
        if config.metric == "conditional_statistical_parity" and len(parts) > 1:
            parts[STANDARDIZED] = self._standardized(parts)
        parts = {part: suppress_small_cells(body, config.min_cell) for part, body in parts.items()}
        for part, body in parts.items():
            if "constraint" in body:
                alerts.extend(self._constraint_alerts(part, body, instant, at))
                continue
            kind = self.tracker.update(part, body["violated"], body["clear"])
            if kind is not None:
                pair = body["pair"] or []
                alerts.append(stamp({"metric": config.metric, "part": part, **body}, config.name, kind, instant, part, *pair, *at))
        records = []
        if config.estimates:
            summary: dict[str, Any] = {
                "metric": config.metric,
                "verdict": config.rule.mode,
                "prior": prior,
                "confidence": config.confidence,
                "trials": {"closed": self.closed, "incomplete": self.incomplete, **({"evicted": self.evicted} if self.evicted else {})},
                "parts": parts,
            }
            if self.totals:
                summary["aggregates"] = dict(sorted(self.totals.items()))
            records.append(stamp(summary, config.name, ESTIMATE, instant, *at))
        return records + alerts

    def _estimator(self, part: str, prior: float | None) -> tuple[float | None, float]:
        """The prior mean and κ of a part: its own (`estimator.parts`, by full name or by the name before a stratum's
        brackets) where the spec gives them, else the spec's."""
        own = self.config.part_estimators.get(part) or self.config.part_estimators.get(part.split("[", 1)[0])
        if own is None:
            return prior, self.config.confidence
        own_prior, own_confidence = own
        part_prior = prior if own_prior is None else self._prior_now(own_prior)
        return part_prior, self.config.confidence if own_confidence is None else own_confidence

    def _part(self, part: str, prior: float | None, confidence: float) -> dict[str, Any]:
        config = self.config
        rates = self.rates[part]
        if prior is None and confidence == 0:
            prior = 0.0  # with κ = 0 the prior has no weight
        kind = INTERVALS[config.interval]
        with_intervals = config.rule.mode != "point"
        groups: dict[str, Any] = {}
        estimates: dict[str, float] = {}
        for group in sorted(rates):
            rate = rates[group]
            if rate.trials <= 0:
                continue
            estimate = rate.get(prior, confidence) if prior is not None else None
            cell: dict[str, Any] = {"estimate": estimate, "hits": rate.hits, "trials": rate.trials}
            if with_intervals and prior is not None:
                cell["interval"] = list(kind.group(rate.hits, rate.trials, config.rule.alpha, prior, confidence))
            groups[group] = cell
            if rate.trials < config.min_trials:
                cell["below_floor"] = True
            elif estimate is not None:
                estimates[group] = estimate
        body = _body(groups, self._judge(part, estimates, prior, confidence), config.rule)
        if config.part_estimators:
            body["prior"], body["confidence"] = prior, confidence
        return body

    def _standardized(self, strata: dict[str, Any]) -> dict[str, Any]:
        """Conditional statistical parity over all strata at once: each group's rate in each stratum, weighted by the
        stratum's share of all trials (direct standardization), so groups are compared as if spread alike over strata."""
        sizes = {part: sum(cell["trials"] for cell in body["groups"].values()) for part, body in strata.items()}
        total = sum(sizes.values())
        weighted: dict[str, float] = {}
        weights: dict[str, float] = {}
        trials: dict[str, int] = {}
        for part, body in strata.items():
            for group, cell in body["groups"].items():
                if cell["estimate"] is None or cell["trials"] < self.config.min_trials:
                    continue
                share = sizes[part] / total
                weighted[group] = weighted.get(group, 0.0) + share * cell["estimate"]
                weights[group] = weights.get(group, 0.0) + share
                trials[group] = trials.get(group, 0) + cell["trials"]
        estimates = {group: weighted[group] / weights[group] for group in sorted(weighted)}
        groups = {group: {"estimate": estimates[group], "trials": trials[group], "weight": weights[group]} for group in estimates}
        return _body(groups, judge(VerdictRule(threshold=self.config.threshold, hysteresis=self.config.rule.hysteresis), estimates), self.config.rule)

    def _measure_part(self, part: str) -> dict[str, Any]:
        """Mean outcomes (with bounds) or benefit rates per group, judged on their gap."""
        config = self.config
        groups: dict[str, Any] = {}
        estimates: dict[str, float] = {}
        means: dict[str, Mean] = {}
        for group, cell in sorted(self.sums[part].items()):
            trials = cell[-1]
            if trials <= 0:
                continue
            if part == "mean_outcome":
                means[group] = Mean.from_sums(cell[0], cell[1], trials)
                mean = means[group].mean
                groups[group] = {"estimate": mean, "trials": round(trials)}
                if trials >= 2:
                    groups[group]["interval"] = list(self._bounds(means[group], config.rule.alpha))
            else:
                if cell[1] <= 0:
                    continue
                mean = cell[0] / cell[1]
                groups[group] = {"estimate": mean, "supply": cell[0], "demand": cell[1], "trials": round(trials)}
            needed = max(2, config.min_trials) if part == "mean_outcome" else config.min_trials
            if trials >= needed:
                estimates[group] = mean
            elif trials < config.min_trials:
                groups[group]["below_floor"] = True

        def difference(high: str, low: str, alpha: float) -> tuple[float, float]:
            low_a, high_a = self._bounds(means[high], alpha / 2)
            low_b, high_b = self._bounds(means[low], alpha / 2)
            return low_a - high_b, high_a - low_b

        if config.rule.mode == "anytime" and part == "mean_outcome":
            bets = {(a, b): bet for (bet_part, a, b), bet in self.bets.items() if bet_part == part}
            return _body(groups, judge(config.rule, estimates, bets=bets), config.rule)
        return _body(groups, judge(config.rule, estimates, difference=difference if part == "mean_outcome" else None), config.rule)

    def _constraint_part(self, rule: ConstraintRule) -> dict[str, Any]:
        """Each group's mean outcome (after the baseline, for a baseline constraint), its τ, its one-sided bound and
        whether that bound certifies the constraint; the part is violated while some judged group is not certified."""
        baseline = self.baselines.get(rule.baseline) if rule.baseline is not None else None
        groups: dict[str, Any] = {}
        failing: list[str] = []
        for group, cell in sorted(self.sums.get("mean_outcome", {}).items()):
            total, squares, trials = cell
            tau = rule.tau
            if rule.baseline is not None:
                before = None if baseline is None else baseline.get(group)
                if before is None or before[2] <= 0:
                    tau = None  # no baseline yet, or none for this group: nothing to compare with
                else:
                    tau = before[0] / before[2]
                    total, squares, trials = total - before[0], squares - before[1], trials - before[2]
            if trials <= 0:
                continue
            mean = total / trials
            entry: dict[str, Any] = {"estimate": mean, "trials": round(trials), "tau": tau}
            groups[group] = entry
            if trials < max(rule.needs(), self.config.min_trials):
                entry["below_floor"] = True
                continue
            if tau is None:
                continue
            if self.config.rule.mode == "anytime":
                lower, upper = self.sequences[(rule.part, group)].bounds(rule.delta)
                entry.update(rule.certify(lower if rule.at_least else upper, tau))
            else:
                entry.update(rule.judge(Mean.from_sums(total, squares, trials), tau))
            if not entry["certified"]:
                failing.append(group)
        judged = [group for group, entry in groups.items() if "certified" in entry]
        return {
            "constraint": {"direction": rule.direction, "tau": rule.tau, "baseline": rule.baseline, "delta": rule.delta, "bound": rule.bound},
            "groups": groups,
            "failing": failing,
            "violated": bool(failing) if judged else None,
            "clear": not failing if judged else None,
        }

    def _constraint_alerts(self, part: str, body: dict[str, Any], instant: int, at: tuple[str, ...]) -> list[dict[str, Any]]:
        """One violation per group when its constraint stops being certified, one recovery when it is certified again."""
        alerts = []
        for group, entry in body["groups"].items():
            if "certified" not in entry:
                continue
            kind = self.tracker.update(f"{part}\x1f{group}", not entry["certified"], entry["certified"])
            if kind is not None:
                record = {"metric": self.config.metric, "part": part, "group": group, "constraint": body["constraint"], **entry}
                alerts.append(stamp(record, self.config.name, kind, instant, part, group, *at))
        return alerts

    def _bounds(self, mean: Mean, alpha: float) -> tuple[float, float]:
        if self.config.bounds == "hoeffding":
            low, high = self.config.outcome_range  # type: ignore[misc]
            return hoeffding_bounds(mean, alpha, low, high)
        return student_t_bounds(mean, alpha)

    def _judge(self, part: str, estimates: dict[str, float], prior: float | None, confidence: float) -> PartVerdict:
        config = self.config
        rule = config.rule
        if rule.mode == "point" or prior is None:
            return judge(rule if prior is not None else VerdictRule(threshold=rule.threshold), estimates)
        rates = self.rates[part]
        kind = INTERVALS[config.interval]
        if rule.mode == "confident":

            def difference(high: str, low: str, alpha: float) -> tuple[float, float]:
                a, b = rates[high], rates[low]
                return kind.difference(a.hits, a.trials, b.hits, b.trials, alpha, prior, confidence)

            def group_interval(group: str, alpha: float) -> tuple[float, float]:
                return kind.group(rates[group].hits, rates[group].trials, alpha, prior, confidence)

            # an interval lies beyond the recovery band only if its centre does: the MAP gap (beta) or the raw gap (wilson, clopper_pearson)
            band = rule.threshold - rule.hysteresis
            if not rule.ratio:
                raw = {group: rates[group].hits / rates[group].trials for group in estimates}
                candidates = [
                    p for p in compared_pairs(list(estimates), rule.pairs)
                    if max(abs(estimates[p[0]] - estimates[p[1]]), abs(raw[p[0]] - raw[p[1]])) > band
                ]  # fmt: skip
                pruned = _PrunedDifference(difference, {frozenset(p) for p in candidates})
                return judge(rule, estimates, difference=pruned)
            return judge(rule, estimates, group_interval=group_interval)
        bets = {(a, b): bet for (bet_part, a, b), bet in self.bets.items() if bet_part == part}
        return judge(rule, estimates, bets=bets)


def _body(groups: dict[str, Any], verdict: PartVerdict, rule: VerdictRule) -> dict[str, Any]:
    """A part's record: per-group cells, the gap (or ratio) and pair, the verdict (with the hysteresis margin of its
    recovery, where the spec sets one), and its evidence when the mode gives any."""
    body: dict[str, Any] = {
        "groups": groups,
        "gap": verdict.gap,
        "ratio": verdict.ratio,
        "pair": list(verdict.pair) if verdict.pair else None,
        "threshold": rule.threshold,
        "violated": verdict.violated,
        "clear": verdict.clear,
    }
    if rule.hysteresis:
        body["hysteresis"] = rule.hysteresis
    if verdict.interval is not None:
        body["interval"] = list(verdict.interval)
    if verdict.log_wealth is not None:
        body["log_wealth"] = verdict.log_wealth
    return body


class _PrunedDifference:
    """Computes difference intervals only for candidate pairs; for the rest returns a point interval at zero gap."""

    def __init__(self, difference, candidates: set[frozenset[str]]):
        self.difference = difference
        self.candidates = candidates

    def __call__(self, high: str, low: str, alpha: float) -> tuple[float, float]:
        if frozenset((high, low)) in self.candidates:
            return self.difference(high, low, alpha)
        return (0.0, 0.0)
