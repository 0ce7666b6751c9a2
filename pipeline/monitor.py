"""The per-monitor merge: waits until every bucket has reported a tick, applies the deltas in event-time order, and evaluates verdicts (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.estimators.rate import Rate
from pipeline.spec.expressions import Expression
from pipeline.trials.bucket import FINISHED, Report
from pipeline.trials.outcomes import TickDelta, TrialOutcome
from pipeline.verdicts.alerts import ESTIMATE, AlertTracker, stamp
from pipeline.verdicts.gap import between_groups


@dataclass(frozen=True)
class MonitorConfig:
    """What the merge needs from the spec."""

    name: str
    metric: str
    threshold: float
    prior: float | Expression
    confidence: float
    tick: int
    on_close: bool
    buckets: int
    estimates: bool = True


@dataclass
class Monitor:
    """Per-group counts of closed trials for every part of the metric, and the alert state."""

    config: MonitorConfig
    progress: dict[int, int] = field(default_factory=dict)
    pending: dict[int, TickDelta] = field(default_factory=dict)
    rates: dict[str, dict[str, Rate]] = field(default_factory=dict)
    totals: dict[str, float] = field(default_factory=dict)
    closed: int = 0
    incomplete: int = 0
    unmatched: int = 0
    unfinished: int = 0
    next_tick: int | None = None
    tracker: AlertTracker = field(default_factory=AlertTracker)

    def receive(self, report: Report) -> list[dict[str, Any]]:
        """Take one bucket's report; return the records of every evaluation that is now final."""
        self.progress[report.bucket] = max(report.through, self.progress.get(report.bucket, report.through))
        for tick, delta in report.deltas.items():
            merged = self.pending.get(tick)
            if merged is None:
                merged = self.pending[tick] = TickDelta()
            merged += delta
        self.unmatched += report.unmatched
        self.unfinished += report.unfinished
        if len(self.progress) < self.config.buckets:
            return []
        final = min(self.progress.values())
        if final == FINISHED:
            final = max(self.pending, default=-FINISHED)
        return self._on_close(final) if self.config.on_close else self._every_tick(final)

    def _every_tick(self, final: int) -> list[dict[str, Any]]:
        if self.next_tick is None:
            ready = [tick for tick in self.pending if tick <= final]
            if not ready:
                return []
            self.next_tick = min(ready)
        records: list[dict[str, Any]] = []
        tick = self.next_tick
        while tick <= final:
            delta = self.pending.pop(tick, None)
            if delta is not None:
                self._apply_counts(delta)
            records.extend(self._evaluate(tick))
            tick += self.config.tick
        self.next_tick = tick
        return records

    def _on_close(self, final: int) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        for tick in sorted(tick for tick in self.pending if tick <= final):
            delta = self.pending.pop(tick)
            for trial in sorted(delta.trials, key=lambda trial: (trial.closed_at, trial.key)):
                self._apply_trial(trial)
                records.extend(self._evaluate(trial.closed_at, trial.key))
        return records

    def _apply_counts(self, delta: TickDelta) -> None:
        for (part, group), (hits, trials) in delta.counts.items():
            rate = self.rates.setdefault(part, {}).setdefault(group, Rate())
            rate.hits += hits
            rate.trials += trials
        for name, value in delta.totals.items():
            self.totals[name] = self.totals.get(name, 0.0) + value
        self.closed += delta.closed
        self.incomplete += delta.incomplete

    def _apply_trial(self, trial: TrialOutcome) -> None:
        self.closed += 1
        if trial.cells is None:
            self.incomplete += 1
        else:
            for part, group, hit in trial.cells:
                self.rates.setdefault(part, {}).setdefault(group, Rate()).update(hit)
        for name, value in trial.totals.items():
            self.totals[name] = self.totals.get(name, 0.0) + value

    def prior(self) -> float | None:
        """The prior mean now: the constant, or the expression over the aggregates (None while undefined)."""
        prior = self.config.prior
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
        for part in sorted(self.rates):
            body = self._part(self.rates[part], prior)
            parts[part] = body
            kind = self.tracker.update(part, body["violated"])
            if kind is not None:
                pair = body["pair"] or []
                alerts.append(stamp({"metric": config.metric, "part": part, **body}, config.name, kind, instant, part, *pair, *at))
        records = []
        if config.estimates:
            summary = {
                "metric": config.metric,
                "prior": prior,
                "confidence": config.confidence,
                "trials": {"closed": self.closed, "incomplete": self.incomplete},
                "parts": parts,
            }
            if self.totals:
                summary["aggregates"] = dict(sorted(self.totals.items()))
            records.append(stamp(summary, config.name, ESTIMATE, instant, *at))
        return records + alerts

    def _part(self, rates: dict[str, Rate], prior: float | None) -> dict[str, Any]:
        config = self.config
        if prior is None and config.confidence == 0:
            prior = 0.0  # with κ = 0 the prior has no weight
        groups = {}
        estimates = {}
        for group in sorted(rates):
            rate = rates[group]
            if rate.trials <= 0:
                continue
            estimate = rate.get(prior, config.confidence) if prior is not None else None
            groups[group] = {"estimate": estimate, "hits": rate.hits, "trials": rate.trials}
            if estimate is not None:
                estimates[group] = estimate
        gap = between_groups(estimates)
        return {
            "groups": groups,
            "gap": gap.difference if gap else None,
            "ratio": gap.ratio if gap else None,
            "pair": [gap.high, gap.low] if gap else None,
            "threshold": config.threshold,
            "violated": gap.difference > config.threshold if gap else None,
        }
