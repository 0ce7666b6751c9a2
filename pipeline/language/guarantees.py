"""What a monitor's verdicts guarantee, under which assumptions, and what in its spec weakens that (pure).

`fairstream spec check` prints these lines, so a user reads the error rate a spec buys before running it.
"""

from __future__ import annotations

from fairstream.language.metric import PartlySeenLabel
from fairstream.language.models import Spec
from fairstream.records.timefmt import format_duration

YEAR = 366 * 86_400_000
"""Milliseconds of a year: an evaluation cadence whose run stops at a shorter gap between events is worth a warning."""


PROXIED = (
    "groups known as probabilities: each group's rate by the method of moments, assuming a calibrated proxy and outcomes that "
    "depend on the proxy inputs only through the group; {intervals}, from the delta method's variance and valid as the trials grow; "
    "bounds beside them assume calibration alone"
)


def guarantee(spec: Spec, *, proxied: bool = False) -> str:
    """One sentence: the verdict mode's error rate, over which family, resting on what (`proxied`: the metric's groups
    are probabilities)."""
    estimator = spec.estimator
    family = "every part and pair of groups together" if estimator.family == "monitor" else "each part on its own"
    constraints = spec.metric.constraints
    certificates = (
        f"; ELF constraints: a false certificate ≤ Σδ = {sum(c.delta for c in constraints):g}, each δ split over the groups, a baseline's mean bounded as a second sample"
        if constraints
        else ""
    )
    if isinstance(spec.metric.label, PartlySeenLabel):
        certificates += (
            "; labels partly seen: each rate weighted by the logged propensities (a delta-method interval)"
            if spec.metric.propensity
            else "; labels partly seen: each rate bounded over what the unseen labels could be (Manski), judged only where the bounds decide"
        )
    if proxied and estimator.verdict != "point":
        intervals = "normal intervals at one fixed look" if estimator.verdict == "confident" else "asymptotic confidence sequences, valid at every look"
        look = "one fixed look" if estimator.verdict == "confident" else "any look"
        return f"{estimator.verdict} verdicts: false alarm at {look} ≤ α = {estimator.alpha:g} over {family}; {PROXIED.format(intervals=intervals)}"
    if estimator.verdict == "change":
        shift = estimator.shift if estimator.shift is not None else spec.metric.threshold
        return (
            f"change verdicts: on a stream that never changes, at most one false change alarm per {estimator.arl:,.0f} trials of "
            f"patience, expected, over every part and pair together, restarts included (a Shiryaev–Roberts e-detector per pair "
            f"of groups on the likelihood ratio of the pairs' contrasts, mixed over the shift: exact for Gaussian pairs of "
            f"known spread, measured for rates); a gap moving by about {shift:g} is found and dated (fairness.changed), "
            f"measured against the gap before it, the gaps before and after with 95 % confidence "
            f"sequences; assumes independent trials; the gap against ε as point verdicts"
        )
    if estimator.verdict == "point":
        return f"point verdicts: the MAP gap against ε, no error rate; groups join once they have {spec.evidence_floor} trial(s){certificates}"
    if estimator.verdict == "confident":
        if spec.metric.type == "delayed_impact":
            basis = f"{estimator.bounds.replace('_', ' ')} bounds on each group's mean outcome"
        elif estimator.interval == "beta_credible":
            basis = "credible intervals of the Beta posterior under the prior: no frequentist error rate"
        else:
            basis = f"{'Newcombe (Wilson)' if estimator.interval == 'wilson' else 'Clopper–Pearson'} intervals of the raw counts, whatever the prior"
        return f"confident verdicts: false alarm at one fixed look ≤ α = {estimator.alpha:g} over {family}; {basis}; assumes independent trials{certificates}"
    return (
        f"anytime verdicts: false alarm at any look, ever, ≤ α = {estimator.alpha:g} over {family} (betting tests, Ville's "
        "inequality); each group's outcomes enter in the order their trials opened, so labels may arrive late and in an "
        f"order that depends on the outcome; assumes independent trials whose opening does not depend on their outcome; "
        f"where it tests more than one pair, one merged alarm over them all at α (fairness.violated_somewhere){certificates}"
    )


def warnings(spec: Spec, *, proxied: bool = False) -> list[str]:
    """What in the spec weakens its verdicts' guarantee or delays them (`proxied`: the metric's groups are probabilities,
    whose anytime verdicts read sums, not outcomes in opening order)."""
    found = []
    estimator = spec.estimator
    if estimator.verdict == "confident" and estimator.interval == "beta_credible":
        found.append(
            "estimator.interval: beta_credible intervals hold no error rate; with confidence κ the prior counts as κ trials "
            "and can decide a verdict on a small group; wilson or clopper_pearson keep α"
        )
    if estimator.verdict == "confident":
        found.append(
            "confident verdicts hold at one fixed look; read after every evaluation they raise more false alarms than α and "
            "give more false certificates than α, and no level is claimed for them then; anytime verdicts hold at every look"
        )
    if estimator.verdict == "anytime" and spec.trial.close_after is None and not proxied:
        found.append(
            "anytime verdicts take outcomes in opening order: without trial.close_after a trial that never closes holds back "
            "every trial opened after it; set close_after to bound the wait"
        )
    every = spec.evaluate.every
    if every is not None and spec.input.max_ahead is None and every * spec.evaluate.max_ticks < YEAR:
        found.append(
            f"evaluate.every {format_duration(every)}: a gap of more than {format_duration(every * spec.evaluate.max_ticks)} between "
            "events (evaluate.max_ticks evaluations) stops the run; input.max_ahead bounds how far one event may move time"
        )
    if estimator.verdict != "point" and estimator.family == "part":
        found.append("estimator.family: part gives each part the whole α: a monitor of k parts may raise a false alarm with probability up to k·α")
    found += _selective_label(spec)
    return found


def _selective_label(spec: Spec) -> list[str]:
    """A plain label read from an event kind other than the prediction's, with no default: the label is missing for
    every trial without such an event, and if that happens on one side of the prediction only (repayment seen only
    for approved loans) the rate counts that side alone."""
    label, prediction = spec.metric.label, spec.metric.prediction
    if not isinstance(label, str) or prediction is None or label not in spec.variables or prediction not in spec.variables:
        return []
    label_variable, prediction_variable = spec.variables[label], spec.variables[prediction]
    label_kind = label_variable.first or label_variable.last
    prediction_kind = prediction_variable.first or prediction_variable.last
    if label_kind is None or label_kind == prediction_kind or label_variable.default is not None:
        return []
    return [
        f"metric.label {label!r} comes from {label_kind} events, {prediction!r} from {prediction_kind or 'another variable'}: a trial "
        f"without {label_kind} has no label and counts as incomplete, so if {label_kind} comes only for some predictions "
        f"(repayment only for approved loans) each rate counts those alone; declare label: {{variable: {label}, observed_when: <the "
        "boolean that says whose label is seen>} to bound the rates instead"
    ]
