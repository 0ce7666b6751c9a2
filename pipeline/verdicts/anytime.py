"""The evidence of a monitor's anytime verdicts: betting tests per pair of groups and confidence sequences per
constraint and group, fed each group's outcomes in the order their trials opened (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from fairstream.estimators.betting import GapBet, RatioBet
from fairstream.estimators.opening import OpeningOrder
from fairstream.estimators.pairing import RatioPairs
from fairstream.estimators.rate import Rate
from fairstream.estimators.sequence import MeanSequence, RateSequence, rescale
from fairstream.trials.bucket import FINISHED
from fairstream.trials.outcomes import TickDelta, TrialOutcome, hidden
from fairstream.verdicts.constraints import ConstraintRule
from fairstream.verdicts.many_pairs.merged import MergedEvidence


@dataclass
class AnytimeEvidence:
    """Closed trials wait in `order` until every trial opened before them has closed (the frontier), then feed the tests.

    Pairs of groups open when both have outcomes released, so which outcomes a pair sees depends on opening times
    alone: however late, and in whatever outcome-dependent order, labels arrive, each group's k-th outcome is a fresh
    draw and the betting tests keep their level (see `fairstream.estimators.betting`).
    """

    epsilon: float
    """The threshold on the scale the tests see (mean outcomes rescaled to [0, 1]; for ratios, τ)."""
    measures: bool
    gap_verdict: bool = True
    outcome_range: tuple[float, float] | None = None
    constraints: tuple[ConstraintRule, ...] = ()
    ratio: bool = False
    """Whether the tests are of the ratio of the rates against τ (disparate impact) rather than their gap."""
    order: OpeningOrder = field(default_factory=OpeningOrder)
    released: dict[str, set[str]] = field(default_factory=dict)
    queues: dict[tuple[str, str, str], RatioPairs] = field(default_factory=dict)
    bets: dict[tuple[str, str, str], GapBet] = field(default_factory=dict)
    sequences: dict[tuple[str, str], MeanSequence] = field(default_factory=dict)
    """Per constraint part and group, the confidence sequence of its mean outcome (from the end of its baseline)."""
    group_sequences: dict[tuple[str, str], RateSequence] = field(default_factory=dict)
    """Per part and group, the confidence sequence of its rate (or rescaled mean outcome), fed what the tests are fed."""
    oldest_open: dict[int, int] = field(default_factory=dict)
    """Per reporter, the earliest opening time of its trials not yet reported (see `Report.oldest_open`)."""
    pending_oldest: dict[int, int] = field(default_factory=dict)
    """Per tick not yet evaluated, the earliest opening time among the trials reported to close in it."""
    merged: MergedEvidence | None = None
    """Every pair's violation e-processes merged into one alarm (see `fairstream.verdicts.many_pairs.merged`)."""
    horizon: int | None = None
    """The label horizon (trial.close_after): a trial opened that long ago has closed, whatever its outcome."""
    maturing: OpeningOrder = field(default_factory=OpeningOrder)
    """Closed trials' rate cells until their trial opened `horizon` ago (see `mature`)."""
    matured: dict[tuple[str, str], Rate] = field(default_factory=dict)
    """Per part and group, the counts of the trials opened at least `horizon` ago: a set fixed by opening times alone."""

    def note_pending(self, tick: int, delta: TickDelta) -> None:
        """Trials reported to close in a tick the merge has not reached: they hold the frontier back until applied."""
        if delta.trials:
            earliest = min(trial.opened for trial in delta.trials)
            self.pending_oldest[tick] = min(earliest, self.pending_oldest.get(tick, earliest))

    def applied(self, tick: int) -> None:
        """The merge took a tick's trials out of its pending ones."""
        self.pending_oldest.pop(tick, None)

    def hold(self, trial: TrialOutcome, cells: list) -> None:
        """Keep a closed trial's tracked cells until the frontier passes its opening (and, for rates, until it matures)."""
        kept = [cell for cell in cells if (cell[0] == "mean_outcome" if self.measures else not hidden(cell[0]))]
        self.order.hold(trial.opened, trial.key, kept)
        if self.horizon is not None and not self.measures:
            self.maturing.hold(trial.opened, trial.key, kept)

    def mature(self, instant: int) -> None:
        """Count every held trial opened at least the horizon before `instant`: all of them have closed by then, so which
        trials are counted depends on when they opened, never on which labels came first."""
        if self.horizon is None:
            return
        for cells in self.maturing.release(instant - self.horizon + 1):
            for part, group, hit in cells:
                self.matured.setdefault((part, group), Rate()).update(bool(hit))

    def matured_of(self, part: str) -> dict[str, Rate]:
        return {group: rate for (of, group), rate in self.matured.items() if of == part}

    def frontier(self, instant: int, later: int = FINISHED) -> int:
        """Every trial that opened before the returned instant has closed by `instant` and been held: the earliest
        opening among trials still open (each reporter's oldest), among those reported to close in later ticks, and
        `later` (the current tick's trials not yet applied). A function of the event-time stream alone, however
        reports were batched."""
        return min(instant + 1, later, *self.oldest_open.values(), *self.pending_oldest.values())

    def release(self, frontier: int, baselines: Iterable[int]) -> None:
        """Feed the tests every held trial opened before `frontier`, in opening order; `baselines` are the lengths of
        the baselines that have ended (a constraint's sequence starts after its baseline)."""
        ended = set(baselines)
        for cells in self.order.release(frontier):
            for part, group, value in cells:
                if self.measures:
                    self._follow_mean(group, value[0], ended)  # type: ignore[index]
                else:
                    self.feed(part, group, float(value))  # type: ignore[arg-type]

    def bets_of(self, part: str) -> dict[tuple[str, str], GapBet]:
        return {(a, b): bet for (bet_part, a, b), bet in self.bets.items() if bet_part == part}

    def sequences_of(self, part: str) -> dict[str, RateSequence]:
        """The part's confidence sequences per group (those of the gaps are the bets' `bounds`)."""
        return {group: sequence for (of, group), sequence in self.group_sequences.items() if of == part}

    def _follow_mean(self, group: str, outcome: float, ended: set[int]) -> None:
        """Mean outcomes: the gap's betting tests on the outcome rescaled to [0, 1], and each constraint's sequence."""
        low, high = self.outcome_range  # type: ignore[misc]
        if self.gap_verdict:
            self.feed("mean_outcome", group, rescale(outcome, low, high))
        for rule in self.constraints:
            if rule.baseline is None or rule.baseline in ended:
                self.sequences.setdefault((rule.part, group), MeanSequence(low, high)).update(outcome)

    def feed(self, part: str, group: str, outcome: float) -> None:
        """Feed one outcome to the betting test of every pair of released groups it belongs to."""
        self.group_sequences.setdefault((part, group), RateSequence()).update(outcome)
        released = self.released.setdefault(part, set())
        released.add(group)
        for other in sorted(released):
            if other == group:
                continue
            a, b = sorted((group, other))
            key = (part, a, b)
            if key not in self.bets:
                self.bets[key] = RatioBet(self.epsilon) if self.ratio else GapBet(self.epsilon)
                self.queues[key] = RatioPairs()
                if self.merged is not None:
                    self.merged.pair_started(key, self.bets[key].violation_rows())
            for x, y in self.queues[key].push(group == a, outcome):
                self.bets[key].update(x, y)
                if self.merged is not None:
                    self.merged.update(key, self.bets[key].get())
        if self.merged is not None:
            self.merged.outcome(part, group, outcome)
