"""`fairstream shield synthesize --groups 2` and `shield simulate --groups 2`: the two-group problem from the options or
a spec's `shield:` section, its synthesized (or hand-set) member and bound, and a check on independent streams."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairstream.cli import console
from fairstream.compiler.load import load_plan
from fairstream.records.errors import UsageError
from fairstream.shields.energy.group_simulation import GroupProblem, group_runs
from fairstream.shields.energy.group_synthesis import Assessment, GroupSynthesis, Measure, assess, member, synthesize_groups
from fairstream.shields.energy.simulation import energy_form
from fairstream.shields.energy.target import Target
from fairstream.shields.runtime.configured import problem_of

NO_RATES = "two groups need the raw rates: give --rates P_A,P_B (or --spec with a shield: section that has rates)"
NO_SHIELD = "{spec} has no shield: section"
SPEC_NO_RATES = "{spec}'s shield has no rates (it is adaptive, or told only the raw gap): there is no decision maker to synthesize for"
CHECK_SEED = 1
"""The check's streams are drawn from (seed, 1), so they are independent of the synthesis's streams (seed 0)."""


@dataclass(frozen=True)
class GroupRequest:
    """The two-group problem and how to settle its member: synthesized for λ, or `steepness` set by hand."""

    problem: GroupProblem
    lam: float
    horizon: int
    measure: Measure
    settle_margin: float
    streams: int
    confidence: float
    steepness: float | None = None


def group_request(options: dict[str, Any], defaults: dict[str, Any]) -> GroupRequest:
    """The request from `--spec` (whose shield section wins over the options) or from the options and the two-group defaults."""
    if options["spec_path"]:
        shield = load_plan(options["spec_path"]).spec.shield
        if shield is None:
            raise UsageError(NO_SHIELD.format(spec=options["spec_path"]))
        if len(shield.groups) > 2:
            raise UsageError(
                f"{options['spec_path']} has {len(shield.groups)} groups: its spread shield is synthesized by "
                f"`fairstream shield run` and `fairstream shield serve`, which print its member and bound first"
            )
        problem = problem_of(shield)
        if problem is None:
            raise UsageError(SPEC_NO_RATES.format(spec=options["spec_path"]))
        return GroupRequest(
            problem, shield.max_violation, shield.horizon, "probability", shield.settle_margin, options["streams"], shield.confidence, shield.steepness
        )
    if options["rates"] is None:
        raise UsageError(NO_RATES)
    chosen = {name: options[name] if options[name] is not None else default for name, default in defaults.items()}
    target = Target(chosen["burn_in"], chosen["running"], chosen["limit"])
    problem = GroupProblem(*options["rates"], options["share"], target)
    return GroupRequest(problem, options["lam"], chosen["horizon"], options["measure"], options["settle_margin"], options["streams"], options["confidence"])


@dataclass(frozen=True)
class Settled:
    """The member a request settles on, its assessment over [τ, T], and the synthesis when there was one."""

    alpha: float
    assessment: Assessment
    method: str
    synthesis: GroupSynthesis | None


def settle(request: GroupRequest) -> Settled:
    if request.steepness is not None:
        assessment, method = assess(
            request.problem, request.steepness, request.horizon, settle_margin=request.settle_margin, runs=request.streams, confidence=request.confidence
        )
        return Settled(request.steepness, assessment, method, None)
    result = synthesize_groups(
        request.problem,
        request.lam,
        request.horizon,
        measure=request.measure,
        settle_margin=request.settle_margin,
        runs=request.streams,
        confidence=request.confidence,
    )
    return Settled(result.alpha, result.assessment, result.method, result)


def _problem_line(request: GroupRequest) -> str:
    problem, (s_lo, s_hi), (l_lo, l_hi) = request.problem, request.problem.target.running, request.problem.target.limit
    return (
        f"p_a = {problem.p_a:g}, p_b = {problem.p_b:g} (raw gap {problem.raw_gap:g}), π = {problem.share:g}, "
        f"S = [{s_lo:g}, {s_hi:g}], L = [{l_lo:g}, {l_hi:g}], τ = {problem.target.burn_in}, T = {request.horizon}"
    )


def _how(settled: Settled, request: GroupRequest) -> str:
    if settled.method == "exact":
        return "exact: dynamic programming over both groups' counts"
    confidence = request.confidence if settled.synthesis is None else settled.synthesis.confidence
    members = "" if settled.synthesis is None else f", jointly for the {settled.synthesis.evaluated} members the bisection may try"
    return f"{settled.assessment.runs:,} simulated streams, one-sided bounds at {confidence:.0%} confidence{members}"


def print_synthesis(request: GroupRequest) -> Settled:
    """Settle the member and print it, its form, its bounds over [τ, T] and how they were computed."""
    settled = settle(request)
    energy = member(request.problem, settled.alpha, request.settle_margin)
    origin = "set by hand" if settled.synthesis is None else f"synthesized for λ = {request.lam:g}"
    console.console.print(
        f"energy: member α = {settled.alpha:.4f} ({origin}; k = {energy.k}, limit point x_L = {energy.limit_point:g}, pivot c = {energy.pivot:g})",
        soft_wrap=True,
    )
    console.console.print(f"form: {energy_form(energy)}", soft_wrap=True)
    console.console.print(_problem_line(request), soft_wrap=True)
    assessment, t = settled.assessment, request.horizon
    rows = [
        [f"P(some D_t ∉ S, τ ≤ t ≤ {t})", f"{assessment.probability:.4g}", f"{assessment.probability_bound:.4g}"],
        [f"E(#t ∈ [τ, {t}] with D_t ∉ S)", f"{assessment.expected:.4g}", f"{assessment.expected_bound:.4g}"],
        [f"mean interference over the first {t}", f"{assessment.interference:.4g}", ""],
    ]
    if settled.synthesis is not None:
        rows.append(["long-run interference (Eq. 46)", f"{settled.synthesis.limit_interference:.4g}", ""])
    if assessment.late is not None:
        halfway = request.problem.target.burn_in + (t - request.problem.target.burn_in) // 2
        rows.append([f"streams first leaving S after t = {halfway}", f"{assessment.late} of {assessment.runs:,}", ""])
    console.table("Guarantees over [τ, T]", ["quantity", "estimate", "bound"], rows, right=[1, 2])
    console.console.print(f"how: {_how(settled, request)}; no bound is claimed after T = {t}", soft_wrap=True)
    if settled.synthesis is not None:
        console.console.print(f"synthesis took {settled.synthesis.seconds:.1f} s")
    return settled


def print_check(request: GroupRequest, settled: Settled, runs: int, steps: int, seed: int) -> None:
    """Run the settled member on `runs` fresh streams of `steps` decisions and set what they show beside the bound."""
    problem = request.problem
    energy = member(problem, settled.alpha, request.settle_margin)
    streams = group_runs(energy, problem, runs, steps, (seed, CHECK_SEED))
    (l_lo, l_hi), within = problem.target.limit, min(steps, request.horizon)
    early = (streams.first_violation > 0) & (streams.first_violation <= within)
    rows = [
        [f"streams leaving S at some τ ≤ t ≤ {within}", f"{early.mean():.4f} ± {np.sqrt(early.mean() * (1 - early.mean()) / runs):.4f}"],
        [f"bound on that ({'exact' if settled.method == 'exact' else f'{request.confidence:.0%} confidence'})", f"{settled.assessment.probability_bound:.4f}"],
    ]
    if steps > within:
        rows.append([f"streams leaving S at some τ ≤ t ≤ {steps} (beyond T: no bound)", f"{streams.violated.mean():.4f}"])
    console.table(
        f"Check: {runs:,} independent streams × {steps:,} decisions (seed {seed})",
        ["quantity", "value"],
        [
            *rows,
            [f"mean violations per stream, t ≤ {steps}", f"{streams.violations.mean():.4f}"],
            [f"final mean D_{steps}", f"{streams.final_gap.mean():.4f}"],
            [f"streams ending inside L = [{l_lo:g}, {l_hi:g}]", f"{((streams.final_gap >= l_lo) & (streams.final_gap <= l_hi)).mean():.4f}"],
            [f"mean interference over {steps} decisions", f"{streams.flips.mean() / steps:.4f}"],
        ],
        right=[1],
    )
