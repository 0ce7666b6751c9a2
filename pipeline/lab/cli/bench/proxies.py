"""`fairstream bench proxies`: groups known only as probabilities, on calibrated streams and on the BISG lending stream."""

from __future__ import annotations

import click
from scipy.stats import binomtest

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.estimators.proxy_calibration import LEVEL
from fairstream.lab.proxies.calibration import calibration_cases
from fairstream.lab.proxies.streams import GROUPS, RATES, THRESHOLD, study

TARGETS = {"calibrated": "≤ 5 %", "shrunk halfway to uniform": "≥ 95 %", "sharpened (squared, normalised)": "≥ 95 %"}
"""What the calibration test should do on each simulated proxy."""


def _interval(hits: int, runs: int) -> tuple[float, float]:
    found = binomtest(hits, runs).proportion_ci(0.95)
    return found.low, found.high


@click.command()
@click.option("--runs", default=200, show_default=True, type=click.IntRange(10), help="Simulated streams per measure.")
@click.option("--trials", default=3000, show_default=True, type=click.IntRange(100), help="Trials per stream.")
@click.option("--looks", default=10, show_default=True, type=click.IntRange(1), help="Evenly spaced looks of the anytime verdicts and sequences.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@click.option("--reported", default=0.15, show_default=True, type=click.FloatRange(0, 1, min_open=True), help="Share of trials carrying their self-reported group, for the calibration test.")
@click.option("--figure", "figure", default=None, type=click.Path(dir_okay=False), help="Also draw the BISG lending stream's gaps to this PNG (needs the bisg extra).")
@click.option("--applicants", default=20_000, show_default=True, type=click.IntRange(1000), help="Applicants of the lending stream drawn with --figure.")
@reports_errors
def proxies(runs: int, trials: int, looks: int, seed: int, reported: float, figure: str | None, applicants: int) -> None:
    """Calibrated proxy streams (three groups, rates 0.60 / 0.45 / 0.52, Dirichlet(0.6) vectors, the true group drawn
    from each): how often each group's interval misses its rate, the verdicts' false alarms at a gap of exactly ε, the
    bounds' misses, and the gap the weighted rates report against the moments' and the truth; then the calibration
    test on calibrated and miscalibrated proxies, with a share of the trials self-reported."""
    measured = study(runs, trials, looks=looks, seed=seed)
    rows = [
        [group, f"{rate:.2f}", f"{fixed:.1%}", f"{anytime:.1%}"]
        for group, rate, fixed, anytime in zip(GROUPS, RATES, measured.missed_fixed, measured.missed_anytime)
    ]
    console.table(
        f"Each group's 95 % interval missing its rate, {runs:,} streams of {trials:,} trials (target ≤ 5 %)",
        ["group", "true rate", "fixed-time, one look", f"anytime, any of {looks} looks"],
        rows,
        right=(1, 2, 3),
    )
    console.table(
        f"Verdicts at α = 0.05 on fair streams whose largest gap is exactly ε = {THRESHOLD} (target ≤ 5 %), and the a − b gap",
        ["measure", "value"],
        [
            ["false alarms, confident (one look)", f"{measured.alarms_confident:.1%}"],
            [f"false alarms, anytime ({looks} looks)", f"{measured.alarms_anytime:.1%}"],
            ["calibration-only bounds missing a rate", f"{measured.bounds_missed:.1%}"],
            ["true gap", f"{measured.true_gap:.3f}"],
            ["moment estimate, mean", f"{measured.moment_gap:.3f}"],
            ["probability-weighted rates, mean", f"{measured.weighted_gap:.3f}"],
        ],
        right=(1,),
    )
    console.console.print(
        f"the weighted rates report {measured.weighted_gap / measured.true_gap:.2f}× the true gap, the moments {measured.moment_gap / measured.true_gap:.2f}×",
        soft_wrap=True,
    )
    cases = calibration_cases(runs, trials, reported, seed)
    console.table(
        f"The calibration test (level {LEVEL:g}) with {reported:.0%} of {trials:,} trials self-reported, {runs:,} streams a proxy; "
        "largest error of the groups' rates, mean over streams",
        ["proxy", "found miscalibrated", "95 % interval", "target", "estimates' error", "recalibrated error"],
        [
            (case.proxy, f"{case.flagged / case.runs:.1%}", "[{:.1%}, {:.1%}]".format(*_interval(case.flagged, case.runs)),
             TARGETS.get(case.proxy, "—"), f"{case.estimate_error:.3f}", f"{case.recalibrated_error:.3f}")
            for case in cases
        ],  # fmt: skip
        right=(1, 2, 4, 5),
    )
    if figure is not None:
        from fairstream.lab.proxies.lending import lending_gaps, write_lending_figure

        gaps = lending_gaps(applicants, seed)
        console.console.print(f"wrote {write_lending_figure(gaps, figure)}: true gap {gaps.truth:.3f}, at the end weighted {gaps.weighted[-1]:.3f}, moments {gaps.moments[-1]:.3f} ± {gaps.half_width[-1]:.3f}", soft_wrap=True)
