"""The per-monitor merge: waits until every reporter has reported a tick, applies the deltas in event-time order to
the monitor's `Counts`, and hands each evaluation to `Evaluation` (pure). Monitors whose counts would be equal share
one merge: counted once, each judged with its own verdicts and record chain."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fairstream.monitoring.close_runs import candidates, columns, runs_closes
from fairstream.monitoring.config import MonitorConfig
from fairstream.monitoring.counts import Counts
from fairstream.monitoring.evaluation import Evaluation
from fairstream.monitoring.quiet import Estimated
from fairstream.records.chain import RecordChain
from fairstream.records.envelope import EVIDENCE
from fairstream.records.errors import EvaluationError
from fairstream.records.timefmt import format_duration, format_instant
from fairstream.trials.bucket import FINISHED, Report
from fairstream.trials.outcomes import CLOSE_ORDER, TickDelta, TrialOutcome


@dataclass
class Judged:
    """One monitor's judgement of shared counts: its alert state and error budgets, and the hash chain of its records."""

    verdicts: Evaluation
    chain: RecordChain
    records: list[dict[str, Any]] = field(default_factory=list)
    """The records of the evaluations of the report being taken."""


@dataclass
class Monitor:
    """One monitor's merge state over its `Counts`, its alert state (`verdicts`) and its record chain; and those of the
    monitors `sharing` its counts."""

    config: MonitorConfig
    sharing: tuple[MonitorConfig, ...] = ()
    """Other monitors whose counts equal this one's (see `MonitorConfig.counts_like`), judged from the same counts."""
    counts: Counts = field(init=False)
    runs: bool = field(init=False)
    """Whether closes are judged a batch at once (see `fairstream.monitoring.close_runs`)."""
    judged: list[Judged] = field(init=False)
    """Per monitor, this one first: its verdicts and its record chain (see `records.chain`)."""
    progress: dict[int, int] = field(default_factory=dict)
    pending: dict[int, TickDelta] = field(default_factory=dict)
    next_tick: int | None = None
    end: int | None = None
    """The last tick the ended input's watermark reaches (see `Report.end`)."""
    idle: set[int] = field(default_factory=set)
    """Reporters whose input partition is quiet for now: the merge does not wait for them (see `Report.idle`)."""
    ended: bool = False
    """The input has ended and been evaluated to its end."""
    evidence: list[tuple[int, float]] = field(default_factory=list)
    """Where the monitor joins its job's merged alarm: its merged evidence at each evaluation not yet handed on."""

    def __post_init__(self) -> None:
        self.runs = runs_closes((self.config, *self.sharing))
        self.counts = Counts(self.config)
        self.judged = [Judged(Evaluation(config), RecordChain(f"monitor/{config.name}", config.spec_sha256)) for config in (self.config, *self.sharing)]

    @property
    def verdicts(self) -> Evaluation:
        """The alert state and error budgets this monitor judges the counts with."""
        return self.judged[0].verdicts

    def receive(self, report: Report) -> list[dict[str, Any]]:
        """Take one reporter's report (and ownership of it); return the records of every evaluation that is now final.

        A reporter is a trial bucket, or an input partition whose trials are kept where it is read.
        """
        anytime = self.counts.anytime
        self.progress[report.bucket] = max(report.through, self.progress.get(report.bucket, report.through))
        if anytime is not None:
            anytime.oldest_open[report.bucket] = report.oldest_open
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
            if anytime is not None:
                anytime.note_pending(tick, delta)
        self.counts.note(report)
        if report.end is not None:
            self.end = report.end if self.end is None else max(self.end, report.end)
        if len(self.progress) < self.config.reporters or len(self.idle) == len(self.progress):
            return []
        final = min(through for reporter, through in self.progress.items() if reporter not in self.idle)
        ending = final == FINISHED
        if ending:  # every tick with closed trials, and every tick the input's event time reached
            final = max((*self.pending, -FINISHED if self.end is None else self.end))
        if self.config.on_close:
            self._on_close(final)
        else:
            self._every_tick(final)
        linked: list[dict[str, Any]] = []
        for judged in self.judged:
            records, judged.records = judged.records, []
            if ending and not self.ended:
                if self.end is not None and self.counts.closed == 0 and self.counts.incomplete == 0 and not records:
                    records = judged.verdicts.records(self.counts, self.end)  # no trial closed: the counts (evicted, unfinished) are still published
                records.extend(judged.verdicts.flush(self.counts))  # the last evaluation's estimate, where the cadence held it back
            linked.extend(judged.chain.link_all(records))
            if ending and not self.ended:  # the input has ended: the chain is closed
                linked.append(judged.chain.seal(final=True))
        if self.config.joins_job:
            linked.extend(self._evidence(final if ending and not self.ended else None))
        self.ended = self.ended or ending
        return linked

    def _evidence(self, final: int | None) -> list[dict[str, Any]]:
        """The merged evidence of the evaluations since the last report, for the job's merge (and where the input has
        ended, that it has: `final`)."""
        name, evidence = self.config.name, self.evidence
        self.evidence = []
        items = [{"type": EVIDENCE, "monitor": name, "instant": instant, "log_evidence": value} for instant, value in evidence]
        if final is not None:
            items.append({"type": EVIDENCE, "monitor": name, "instant": final, "log_evidence": 0.0, "final": True})
        return items

    def _every_tick(self, final: int) -> None:
        if self.next_tick is None:
            ready = [tick for tick in self.pending if tick <= final]
            if not ready:
                return
            self.next_tick = min(ready)
        tick = self.next_tick
        due = (final - tick) // self.config.tick + 1
        if due > self.config.max_ticks:
            raise EvaluationError(
                f"monitor {self.config.name}: event time moved from {format_instant(tick)} to {format_instant(final)}: "
                f"{due:,} evaluations of every {format_duration(self.config.tick)} at once, more than evaluate.max_ticks = "
                f"{self.config.max_ticks:,}; evaluate less often (evaluate.every), raise evaluate.max_ticks, or bound how far one "
                "event may move time (input.max_ahead makes such events dead letters)"
            )
        counts, anytime = self.counts, self.counts.anytime
        while tick <= final:
            counts.expire(tick)
            counts.take_baselines(tick)
            delta = self.pending.pop(tick, None)
            if delta is not None:
                counts.apply(tick, delta, self.config.slot_outcomes)
                counts.openings += delta.opened
            if counts.events is not None:
                counts.events.advance(tick, None if delta is None else delta.windows)
            if anytime is not None:
                anytime.applied(tick)
                anytime.release(anytime.frontier(tick), counts.baselines)
            self._evaluate(tick)
            counts.after_tick(tick)
            tick += self.config.tick
        self.next_tick = tick

    def _on_close(self, final: int) -> None:
        counts, anytime = self.counts, self.counts.anytime
        for tick in sorted(tick for tick in self.pending if tick <= final):
            delta = self.pending.pop(tick)
            if anytime is not None:
                anytime.applied(tick)
            counts.openings += delta.opened
            if counts.events is not None:
                counts.events.advance(tick, delta.windows)
            trials = sorted(delta.trials, key=CLOSE_ORDER)
            batch = columns(counts, trials) if self.runs and trials else None
            if batch is not None:
                self._close_run(trials, candidates([judged.verdicts.config for judged in self.judged], counts, trials, batch))
                continue
            later = opened_later(trials)
            for index, trial in enumerate(trials):
                counts.take_baselines(trial.closed_at)
                counts.apply_trial(trial)
                if anytime is not None:
                    anytime.release(anytime.frontier(trial.closed_at, later[index + 1]), counts.baselines)
                self._evaluate(trial.closed_at, trial.key)

    def _close_run(self, trials: list[TrialOutcome], marks: Sequence[int]) -> None:
        """Count a batch of closed trials, evaluating each where some monitor's evaluation may write something (`marks`,
        see `fairstream.monitoring.close_runs`) or its cadence is due, and the others a batch at once."""
        counts, instants = self.counts, [trial.closed_at for trial in trials]
        stops = [*marks, len(trials)]
        position = 0
        for mark in stops:
            while position <= mark and position < len(trials):
                stop = min(mark, *(judged.verdicts.cadence.next_due(position, instants) for judged in self.judged))
                if stop > position:  # judged quiet by every monitor: counted, nothing written
                    counts.take_baselines(instants[position])
                    counts.apply_quiet(trials[position:stop])
                    for judged in self.judged:
                        judged.verdicts.skip_quietly(stop - position, instants[stop - 1], trials[stop - 1].key, counts.noted())
                if stop == len(trials):
                    return
                trial = trials[stop]
                counts.take_baselines(trial.closed_at)
                counts.apply_trial(trial)
                self._evaluate(trial.closed_at, trial.key)
                position = stop + 1

    def _evaluate(self, instant: int, key: str | None = None) -> None:
        """One evaluation by every monitor of the counts, first brought up to date (a running median draws its rates)."""
        self.config.counting.cells.draw(self.counts)
        estimated: Estimated = {}  # what one monitor has estimated, the others of these counts judge as they are
        for judged in self.judged:
            judged.records.extend(judged.verdicts.records(self.counts, instant, key, estimated))
        if self.config.joins_job and self.counts.anytime is not None and self.counts.anytime.merged is not None:
            self.evidence.append((instant, self.counts.anytime.merged.log_evidence))


def opened_later(trials: list[TrialOutcome]) -> list[int]:
    """For each index i of trials in close order, the earliest opening among trials[i:] (FINISHED past the end)."""
    later = [FINISHED] * (len(trials) + 1)
    for index in range(len(trials) - 1, -1, -1):
        later[index] = min(later[index + 1], trials[index].opened)
    return later
