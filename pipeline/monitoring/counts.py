"""Everything one monitor has counted, and the one place that changes it: each part's rates or sums per group, the
aggregates, the trials closed and lost, the tracked groups, the baselines, the anytime evidence and the change
detectors (pure)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from fairstream.estimators.rate import Rate
from fairstream.estimators.scores import ScoreCounts
from fairstream.monitoring.config import MonitorConfig
from fairstream.monitoring.event_windows import SlidingWindows
from fairstream.trials.bucket import Report
from fairstream.trials.outcomes import CLOSE_ORDER, UNLISTED, SlotOutcomes, TickDelta, TrialOutcome
from fairstream.verdicts.changes import ChangeEvidence
from fairstream.verdicts.tracked import TrackedGroups, unlisted_total

if TYPE_CHECKING:
    from fairstream.verdicts.anytime import AnytimeEvidence


class Noted(NamedTuple):
    """What the reports say beside the closed trials, as an estimate record shows it."""

    first_opening: int | None
    unfinished: int
    evicted: int


@dataclass
class Counts:
    """One monitor's counts; its metric's cells and its window (strategies the compiler chose) say how trials enter and leave."""

    config: MonitorConfig
    groups: TrackedGroups = field(init=False)
    """The groups each part tracks (at most `max_groups`), and the trials of those it does not."""
    anytime: AnytimeEvidence | None = field(init=False)
    """Anytime verdicts: the betting tests and confidence sequences, fed in opening order; None under other verdicts."""
    changes: ChangeEvidence | None = field(init=False)
    """Change verdicts: each part's pair detectors, fed in close order; None under other verdicts."""
    scores: ScoreCounts | None = field(init=False)
    """A scoring rate against the running median: each group's scores, turned into rates at each evaluation."""
    rates: dict[str, dict[str, Rate]] = field(default_factory=dict)
    sums: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    totals: dict[str, float] = field(default_factory=dict)
    closed: int = 0
    openings: int = 0
    """Trials opened so far, where the open trials are counted (`Counting.open_trials`): open = openings − closed."""
    incomplete: int = 0
    unmatched: int = 0
    unfinished: int = 0
    evicted: int = 0
    first_opening: int | None = None
    """The event time of the first event of an opening kind (the first decision) any reporter received."""
    history: deque[tuple[int, TickDelta]] = field(default_factory=deque)
    """Sliding windows over ticks: each tick's counts, to take out when they leave."""
    opened: list[tuple[int, str, TrialOutcome]] = field(default_factory=list)
    """Windows by opened time: the counted trials as a heap on (opened_at, key), the first to leave on top."""
    period_start: int | None = None
    """Periodic windows by opened time: the instant the current period began (its trials opened after it)."""
    weight: float = 1.0
    """discount^t of the coming tick, t counted from the episode's first (see `SumCells.discount`)."""
    started: int | None = None
    """The first instant counted (a tick, or a trial's close): baseline constraints measure their length from it."""
    baselines: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    """Per baseline length: each group's mean-outcome sums when the baseline ended, its τ from then on."""
    events: SlidingWindows | None = field(init=False)
    """The spec's windows over raw events, slid tick by tick; None without any."""

    def __post_init__(self) -> None:
        config = self.config
        self.groups = TrackedGroups(config.name, config.counting.max_groups)
        self.scores = ScoreCounts() if config.running_median else None
        self.events = SlidingWindows(config.counting.events, config.counting.max_groups) if config.counting.events else None
        detection = config.judging.detection
        self.changes = None if detection is None else ChangeEvidence(detection, config.rule.pairs)
        self.anytime = None
        if config.opening_order:
            from fairstream.verdicts.anytime import AnytimeEvidence  # anytime verdicts alone need numpy

            self.anytime = AnytimeEvidence(
                config.bet_epsilon, config.measures, config.judging.gap_verdict, config.estimation.outcome_range,
                config.judging.constraints, ratio=config.rule.ratio, horizon=config.judging.label_horizon,
            )  # fmt: skip
            if config.merges_pairs:
                from fairstream.verdicts.budget import MonitorBudget
                from fairstream.verdicts.many_pairs.merged import MergedEvidence

                listed = None if config.rule.pairs is None else frozenset(config.rule.pairs)
                self.anytime.merged = MergedEvidence(config.rule.alpha, MonitorBudget(1.0, "monitor", config.judging.declared_parts, config.judging.declared_pairs), listed)

    @property
    def score_counts(self) -> ScoreCounts:
        """The scores of a scoring rate against the running median (see `ScoreCells`)."""
        assert self.scores is not None, "scores are counted for a scoring rate against its running median"
        return self.scores

    def note(self, report: Report) -> None:
        """Add what a report says of trials outside the cells: unmatched, unfinished, evicted, and the first decision."""
        if report.first_opening is not None and (self.first_opening is None or report.first_opening < self.first_opening):
            self.first_opening = report.first_opening
        self.unmatched += report.unmatched
        self.unfinished += report.unfinished
        self.evicted += report.evicted

    def noted(self) -> Noted:
        """The reports' notes as they stand (see `note`)."""
        return Noted(self.first_opening, self.unfinished, self.evicted)

    def apply(self, tick: int, delta: TickDelta, settle: SlotOutcomes | None) -> None:
        """Count a tick's closed trials: one by one where the monitor needs them so (a window selecting by opened time
        leaves out those opened before its span), else as the tick's sums (slot tuples settled into cells first)."""
        window = self.config.counting.window
        if self.config.needs_trials:
            for trial in sorted(delta.trials, key=CLOSE_ORDER):
                if window.selects and not window.inside(self, trial, tick):
                    self.closed += 1  # closed, but opened before the window's span: counted in no group
                    self.incomplete += trial.cells is None
                    continue
                self.apply_trial(trial)
                if window.selects:
                    window.keep_trial(self, trial)
            return
        if delta.unsettled:
            assert settle is not None, "buckets count by slot tuples only where the plan settles them"
            delta.settle(settle)
        self.count(delta, sign=1)
        self.closed += delta.closed
        self.incomplete += delta.incomplete
        self.add_totals(delta.totals)
        window.keep(self, tick, delta)

    def count(self, delta: TickDelta, sign: int) -> None:
        """Add (sign 1) or take out (sign -1) a tick's cell counts."""
        self.config.counting.cells.count(self, delta, sign)

    def apply_trial(self, trial: TrialOutcome) -> None:
        """Count one closed trial: its tracked cells, the anytime tests' share of it, and its aggregates."""
        self.closed += 1
        cells = trial.cells
        if cells is None:
            self.incomplete += 1
        else:
            tracked = self.groups.admit((part, group) for part, group, _ in cells)
            for part, group, _ in cells:
                if (part, group) not in tracked:
                    self.groups.miss(part, group, 1)
            cells = [cell for cell in cells if (cell[0], cell[1]) in tracked]
        if cells:
            self.config.counting.cells.add(self, cells)
        if self.anytime is not None and cells is not None:
            self.anytime.hold(trial, cells)
        if self.changes is not None and cells:
            self.changes.hold(trial, cells)
        self.add_totals(trial.totals)

    def apply_quiet(self, trials: list[TrialOutcome]) -> None:
        """Count closed trials as `apply_trial` does, for plain rates with neither anytime tests nor change detectors:
        a trial whose groups are all tracked already goes straight to its rates."""
        rates, tracked, totals = self.rates, self.groups.tracked, self.totals
        for trial in trials:
            cells = trial.cells
            if cells and not all(group in tracked.get(part, ()) for part, group, _ in cells):
                self.apply_trial(trial)  # a group new to its part: admitted as apply_trial admits it
                continue
            self.closed += 1
            if cells is None:
                self.incomplete += 1
            else:
                for part, group, hit in cells:
                    rate = rates[part][group]
                    rate.hits += 1 if hit else 0
                    rate.trials += 1
            if trial.totals and any(value != 0.0 or name not in totals for name, value in trial.totals.items()):  # adding 0.0 changes nothing
                add_totals(totals, trial.totals)

    def remove_trial(self, trial: TrialOutcome) -> None:
        """Take a trial's cells and totals out again (a sliding window by opened time moved past it); it stays closed."""
        if trial.cells is not None:
            for part, group, value in trial.cells:
                self.config.counting.cells.remove(self, part, group, value)
        for name, value in trial.totals.items():
            if not name.startswith(UNLISTED):  # trials outside the listed groups are counted since the run began
                self.totals[name] -= value

    def add_totals(self, totals: dict[str, float]) -> None:
        """Add a trial's or a tick's aggregate contributions (see `add_totals`)."""
        add_totals(self.totals, totals)

    def take_baselines(self, instant: int) -> None:
        """Keep each group's mean-outcome sums as they stand when a baseline constraint's length has passed."""
        if self.started is None:
            self.started = instant
        for rule in self.config.judging.constraints:
            if rule.baseline is not None and rule.baseline not in self.baselines and instant >= self.started + rule.baseline:
                self.baselines[rule.baseline] = {group: list(cell) for group, cell in self.sums.get("mean_outcome", {}).items()}

    def expire(self, tick: int) -> None:
        """Take out what has left the window by `tick`."""
        self.config.counting.window.expire(self, tick)

    def after_tick(self, tick: int) -> None:
        """Close an evaluated tick: the cells' discount and recency, then the window's period."""
        self.config.counting.cells.after_tick(self)
        self.config.counting.window.after_tick(self, tick)

    def new_period(self, tick: int) -> None:
        """A periodic window's new episode: every cell starts again from `tick`; the aggregates go on."""
        self.rates.clear()
        self.sums.clear()
        if self.scores is not None:
            self.scores.clear()
        self.weight = 1.0
        self.period_start = tick


def add_totals(totals: dict[str, float], added: dict[str, float]) -> None:
    """Add aggregate contributions to `totals` (unlisted group values bounded, see `unlisted_total`; in name order, so
    which values are counted one by one does not depend on the order reports merged in)."""
    for name, value in sorted(added.items()):
        name = unlisted_total(totals, name)
        totals[name] = totals.get(name, 0.0) + value
