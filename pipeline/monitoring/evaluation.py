"""What a monitor says at an evaluation: each part's record from the counts it has accumulated, judged at the level
its error budget gives it, small cells suppressed, and the alerts where a verdict turns (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fairstream.estimators.means import Mean, mean_bounds
from fairstream.estimators.priors import part_estimator, prior_now
from fairstream.estimators.rate import Rate
from fairstream.monitoring.cadence import PublishCadence
from fairstream.monitoring.config import MonitorConfig
from fairstream.monitoring.counts import Counts, Noted
from fairstream.monitoring.estimate import estimate_body
from fairstream.monitoring.quiet import Estimated, judged_rates, judges_quietly, quiet_standing
from fairstream.monitoring.triggers import Triggers, trigger_values
from fairstream.records.envelope import CHANGED, ESTIMATE, MERGED, stamp
from fairstream.records.timefmt import format_instant
from fairstream.trials.outcomes import PROXY, hidden
from fairstream.verdicts.alerts import CERTIFIED_STATUS, INCONCLUSIVE, AlertTracker, part_status
from fairstream.verdicts.budget import Budget, MonitorBudget
from fairstream.verdicts.changes import ChangeEvidence, change_record
from fairstream.verdicts.constraints import ConstraintRule, constraint_part
from fairstream.verdicts.horizon import trials_to_decide
from fairstream.verdicts.judge import judge
from fairstream.verdicts.partly_seen import partly_seen_part, withhold_selective
from fairstream.verdicts.parts import (
    describe_interval,
    enclose,
    every_group_judged,
    measure_verdict,
    part_body,
    publish_sequences,
    rate_part,
    standardized_part,
    weighted_part,
)
from fairstream.verdicts.publish import suppress_small_cells

if TYPE_CHECKING:
    from fairstream.verdicts.anytime import AnytimeEvidence
    from fairstream.verdicts.many_pairs.merged import MergedEvidence

MERGED_ASSUMPTION = "independent trials; each group's outcomes share one rate (or mean) while every pair is within the threshold"
STANDARDIZED = "selection_rate[standardized]"
"""The part of conditional statistical parity aggregated over strata (point verdicts)."""


@dataclass
class Evaluation:
    """The alert state and the error budgets of one monitor; `records` judges the monitor's counts as they stand."""

    config: MonitorConfig
    tracker: AlertTracker = field(default_factory=AlertTracker)
    budget: MonitorBudget = field(init=False)
    """α over parts and pairs, each pair's share fixed when it is first judged."""
    constraint_budgets: dict[str, Budget] = field(default_factory=dict)
    """Per constraint part, its δ over the groups it judges."""
    cadence: PublishCadence = field(init=False)
    """Which evaluations write their estimate record (`publish.every`)."""
    held: tuple[dict[str, Any] | None, int, tuple[str, ...], Noted | None] | None = None
    """The last evaluation where the cadence did not write its estimate: (body, instant, names, None), or (None,
    instant, names, the reports' notes then) where it can be judged again from the counts (`quiet`)."""
    quiet: bool = field(init=False)
    """Whether an evaluation is first judged without its records, written only where something turns (see `quiet_standing`)."""
    triggers: Triggers = field(init=False)
    """The spec's triggers and which stand raised."""

    def __post_init__(self) -> None:
        self.budget = self.config.budget()
        self.cadence = PublishCadence(self.config.publishing.every)
        self.quiet = judges_quietly(self.config)
        self.triggers = Triggers(self.config.triggers)

    def records(self, counts: Counts, instant: int, trial_key: str | None = None, estimated: Estimated | None = None) -> list[dict[str, Any]]:
        """The estimate record (where the cadence writes it) and the alerts of an evaluation of `counts` at `instant`
        (after the closed trial `trial_key`, for verdicts on every close); `estimated`: the estimates other monitors of
        these counts have made at this evaluation (see `quiet_standing`)."""
        prior = prior_now(self.config.estimation.prior, counts.totals)
        at = () if trial_key is None else (trial_key,)
        if self.quiet:
            standing = quiet_standing(self.config, counts, self.tracker, prior, estimated)
            if standing is not None and self.cadence.skips(instant, standing):
                self.held = (None, instant, at, counts.noted())
                return []
        return self._rows(self._evaluated(counts, prior, instant, at), instant)

    def skip_quietly(self, evaluations: int, instant: int, trial_key: str, noted: Noted) -> None:
        """Evaluations that write nothing, judged a batch at once (see `fairstream.monitoring.close_runs`); the last was
        after the closed trial `trial_key` at `instant`."""
        self.cadence.skipped(evaluations)
        self.held = (None, instant, (trial_key,), noted)

    def flush(self, counts: Counts) -> list[dict[str, Any]]:
        """The last evaluation's estimate record where the cadence held it back: the input has ended."""
        if self.held is None:
            return []
        body, instant, at, noted = self.held
        self.held = None
        if body is None:  # judged quietly: nothing but the reports' notes has changed the counts since
            return self._rows(self._evaluated(counts, prior_now(self.config.estimation.prior, counts.totals), instant, at, noted), instant)
        return self._rows([stamp(body, self.config.name, ESTIMATE, instant, *at)], instant)

    def _rows(self, records: list[dict[str, Any]], instant: int) -> list[dict[str, Any]]:
        """A plain table's records name the rows read (its event time is the last row's number, from 0)."""
        if self.config.numbered:
            for record in records:
                record["row"] = instant + 1
        return records

    def _evaluated(self, counts: Counts, prior: float | None, instant: int, at: tuple[str, ...], noted: Noted | None = None) -> list[dict[str, Any]]:
        """Judge every part, alert where a verdict turns, and write the estimate where the cadence (or `noted`: the
        input's end) asks for it."""
        config = self.config
        if counts.anytime is not None:
            counts.anytime.mature(instant)  # the trials opened a label horizon ago, which anytime records publish
        parts: dict[str, Any] = {}
        alerts: list[dict[str, Any]] = []
        for part in sorted(config.counting.cells.table(counts)):
            if hidden(part):
                continue
            if config.proxy is not None:
                from fairstream.verdicts.proxy import proxy_part  # groups as probabilities alone need numpy

                parts[part] = proxy_part(counts.sums[part][PROXY], config.proxy, config.rule, level=self._level(part), min_trials=config.judging.min_trials)
            elif config.estimation.sample_weights and config.judging.gap_verdict:
                part_prior, confidence = part_estimator(config.estimation.part_estimators, part, prior, config.estimation.confidence, counts.totals)
                parts[part] = weighted_part(
                    counts.sums[part], config.rule, prior=part_prior, confidence=confidence, interval=config.estimation.interval,
                    min_trials=config.judging.min_trials, level=self._level(part),
                )  # fmt: skip
            elif config.estimation.partly_seen:
                parts[part] = partly_seen_part(
                    counts.sums[part], config.rule, weighted=config.estimation.weighted, min_trials=config.judging.min_trials, level=self._level(part)
                )
            elif config.judging.gap_verdict:
                parts[part] = (
                    self._measure_part(counts, part)
                    if config.measures
                    else self._part(counts, part, *part_estimator(config.estimation.part_estimators, part, prior, config.estimation.confidence, counts.totals), instant)
                )
        for rule in config.judging.constraints:
            parts[rule.part] = self._constraint_part(counts, rule)
        if counts.changes is not None:
            alerts.extend(self._changes(counts.changes, instant, at))
        if counts.anytime is not None and counts.anytime.merged is not None:
            alerts.extend(self._merged(counts.anytime.merged, instant, at))
        if config.metric == "conditional_statistical_parity" and len(parts) > 1:
            parts[STANDARDIZED] = standardized_part(parts, config.rule, config.judging.min_trials)
        parts = {part: suppress_small_cells(body, config.publishing.min_cell) for part, body in parts.items()}
        for part, body in parts.items():
            if "constraint" in body:
                alerts.extend(self._constraint_alerts(part, body, instant, at))
                continue
            kind = self.tracker.update(part, body["violated"], body["clear"])
            if body["violated"] is not None or part in self.tracker.violated:
                body["violated"] = self.tracker.violated.get(part, False)  # the alert state: hysteresis holds it too
            point = config.rule.mode == "point" or body.get("verdict") == "point"
            body["status"] = part_status(point, body["violated"], body.pop("certified", None))
            if body["status"] == INCONCLUSIVE and not point and not config.measures and not config.rule.ratio and config.proxy is None and not config.estimation.sample_weights and not config.rule.overall:
                body["time_to_verdict"] = trials_to_decide(body, config.rule.mode, config.rule.alpha)
            pair = body["pair"] or []
            if kind is not None:
                alerts.append(stamp({"metric": config.metric, "part": part, **body}, config.name, kind, instant, part, *pair, *at))
            if not point:
                certification = self.tracker.certify(part, body["status"] == CERTIFIED_STATUS)
                if certification is not None:
                    alerts.append(stamp({"metric": config.metric, "part": part, **body}, config.name, certification, instant, part, *at))
        windows = None if counts.events is None else counts.events.values()
        if config.triggers:
            values = trigger_values(self.triggers.needed, parts, windows, config.counting.missing_events, counts.closed, counts.openings)
            alerts.extend(self.triggers.records(config.name, values, instant, at))
        if noted is None and not self.cadence.due(instant, parts, bool(alerts)):
            self.held = (None, instant, at, counts.noted()) if self.quiet else (estimate_body(config, counts, parts, prior, instant, windows=windows), instant, at, None)
            return alerts
        self.held = None
        return [stamp(estimate_body(config, counts, parts, prior, instant, noted, windows), config.name, ESTIMATE, instant, *at), *alerts]

    def _changes(self, evidence: ChangeEvidence, instant: int, at: tuple[str, ...]) -> list[dict[str, Any]]:
        """A `fairness.changed` record per change the detectors found since the last evaluation."""
        detection = evidence.detection
        return [
            stamp(change_record(self.config.metric, part, pair, change, detection), self.config.name, CHANGED, instant, part, *pair, str(change.changed_at), *at)
            for part, pair, change in evidence.take()
        ]

    def _merged(self, merged: MergedEvidence, instant: int, at: tuple[str, ...]) -> list[dict[str, Any]]:
        """The `fairness.violated_somewhere` record, once, at the first evaluation after the merged evidence reached 1/α:
        like a betting test's rejection, it stands for good."""
        if not merged.raised or merged.reported:
            return []
        merged.reported = True
        body = {"metric": self.config.metric, **merged.body(), "assumption": MERGED_ASSUMPTION}
        return [stamp(body, self.config.name, MERGED, instant, *at)]

    def _level(self, part: str):
        """The α of each pair of `part`: its share of the monitor's budget, fixed when first asked for."""
        budget = self.budget
        return lambda pair: budget.pair_alpha(part, pair)

    def _part(self, counts: Counts, part: str, prior: float | None, confidence: float, instant: int) -> dict[str, Any]:
        config = self.config
        bets = counts.anytime.bets_of(part) if counts.anytime is not None else None
        sequences = counts.anytime.sequences_of(part) if counts.anytime is not None else None
        rates = counts.rates[part]
        shown = None if counts.anytime is None else anytime_rates(counts.anytime, part, rates)
        judged, selective, unlabeled = judged_rates(counts, part)
        body = rate_part(
            judged, config.rule, prior=prior, confidence=confidence,
            interval=config.estimation.interval, min_trials=config.judging.min_trials, level=self._level(part), bets=bets, sequences=sequences,
            published=None if shown is None else {group: rate for group, rate in shown.items() if group not in selective},
        )  # fmt: skip
        if selective:
            withhold_selective(body, selective, rates, unlabeled)
        if counts.anytime is not None:
            body["counted"] = RELEASED if counts.anytime.horizon is None else MATURED
            if counts.anytime.horizon is not None:
                body["opened_by"] = format_instant(instant - counts.anytime.horizon)
        if config.estimation.part_estimators:
            body["prior"], body["confidence"] = prior, confidence
        if config.metric == "scoring_rate":  # the cut it counts above: the running median, or the spec's
            body["median"] = counts.scores.cut if counts.scores is not None else config.estimation.median
        return body

    def _measure_part(self, counts: Counts, part: str) -> dict[str, Any]:
        """Mean outcomes (with bounds) or benefit rates per group, judged on their gap."""
        config = self.config
        groups: dict[str, Any] = {}
        estimates: dict[str, float] = {}
        means: dict[str, Mean] = {}
        for group, cell in sorted(counts.sums[part].items()):
            trials = cell[-1]
            if trials <= 0:
                continue
            if part == "mean_outcome":
                means[group] = Mean.from_sums(cell[0], cell[1], trials)
                mean = means[group].mean
                groups[group] = {"estimate": mean, "trials": round(trials)}
                if trials >= 2:
                    groups[group]["interval"] = list(self._bounds(means[group], config.rule.alpha))
                    groups[group]["interval_of"] = "estimate"
            else:
                if cell[1] <= 0:
                    continue
                mean = cell[0] / cell[1]
                groups[group] = {"estimate": mean, "supply": cell[0], "demand": cell[1], "trials": round(trials)}
            needed = max(2, config.judging.min_trials) if part == "mean_outcome" else config.judging.min_trials
            if trials >= needed:
                estimates[group] = mean
            elif trials < config.judging.min_trials:
                groups[group]["below_floor"] = True
        if counts.anytime is not None and part == "mean_outcome":
            return self._anytime_means(counts.anytime, part, groups, estimates)
        group_bounds = (lambda group, alpha: self._bounds(means[group], alpha)) if part == "mean_outcome" else None
        verdict = measure_verdict(
            config.rule, estimates, self._level(part), group_bounds, every_group_judged(config.rule, groups, estimates)
        )
        body = part_body(groups, verdict, config.rule)
        if config.rule.mode == "confident" and group_bounds is not None:
            describe_interval(body, verdict, "gap")
        return body

    def _anytime_means(self, anytime: AnytimeEvidence, part: str, groups: dict[str, Any], estimates: dict[str, float]) -> dict[str, Any]:
        """Mean outcomes under anytime verdicts: each group's confidence sequence and the gap's, on the outcome range
        (which anytime verdicts on mean outcomes require)."""
        config = self.config
        assert config.estimation.outcome_range is not None
        low, high = config.estimation.outcome_range
        sequences = anytime.sequences_of(part)
        for group, cell in groups.items():
            if group in sequences:
                lower, upper = sequences[group].bounds(config.rule.alpha)
                enclose(cell, (low + (high - low) * lower, low + (high - low) * upper), "estimate")
        bets = anytime.bets_of(part)
        complete = every_group_judged(config.rule, groups, estimates)
        verdict = judge(config.rule, estimates, level=self._level(part), bets=bets, complete=complete)
        body = part_body(groups, verdict, config.rule)
        publish_sequences(body, verdict, bets, width=high - low, interval_of="gap")
        return body

    def _constraint_part(self, counts: Counts, rule: ConstraintRule) -> dict[str, Any]:
        """Each group's constraint, judged at its share of the constraint's δ (see `constraint_part`)."""
        budget = self.constraint_budgets.get(rule.part)
        if budget is None:
            budget = self.constraint_budgets[rule.part] = Budget(rule.delta, self.config.judging.declared_groups)
        return constraint_part(
            rule, counts.sums.get("mean_outcome", {}), counts.baselines.get(rule.baseline) if rule.baseline is not None else None,
            min_trials=self.config.judging.min_trials, budget=budget, sequences=None if counts.anytime is None else counts.anytime.sequences,
        )  # fmt: skip

    def _constraint_alerts(self, part: str, body: dict[str, Any], instant: int, at: tuple[str, ...]) -> list[dict[str, Any]]:
        """One violation per group when its constraint stops being certified, one recovery when it is certified again;
        the part is violated while some group's alert stands."""
        alerts = []
        for group, entry in body["groups"].items():
            if "certified" not in entry:
                continue
            kind = self.tracker.update(f"{part}\x1f{group}", not entry["certified"], entry["certified"])
            if kind is not None:
                record = {"metric": self.config.metric, "part": part, "group": group, "constraint": body["constraint"], **entry}
                alerts.append(stamp(record, self.config.name, kind, instant, part, group, *at))
        standing = [group for group in body["groups"] if self.tracker.violated.get(f"{part}\x1f{group}")]
        if body["violated"] is not None or standing:
            body["violated"] = bool(standing)
        judged = [entry["certified"] for entry in body["groups"].values() if "certified" in entry]
        body["status"] = part_status(False, body["violated"], bool(judged) and all(judged))
        return alerts

    def _bounds(self, mean: Mean, alpha: float) -> tuple[float, float]:
        return mean_bounds(mean, alpha, self.config.estimation.bounds, self.config.estimation.outcome_range)


MATURED = "matured"
"""What an anytime part's rates count where the trial has a close_after: the trials opened at least that long ago
(`opened_by`), all closed whatever their outcome, so the published rates and gaps do not lean on which labels came first."""

RELEASED = "released_in_opening_order"
"""Without a close_after: the outcomes the tests have taken, every trial opened before the earliest one still open."""


def anytime_rates(evidence: AnytimeEvidence, part: str, closed: dict[str, Rate]) -> dict[str, Rate]:
    """Each tracked group's hits and trials under anytime verdicts: the matured trials, else those released to the tests."""
    if evidence.horizon is not None:
        matured = evidence.matured_of(part)
        return {group: matured.get(group, Rate()) for group in closed}
    sequences = evidence.sequences_of(part)
    return {group: Rate(round(sequences[group].total), sequences[group].count) if group in sequences else Rate() for group in closed}
