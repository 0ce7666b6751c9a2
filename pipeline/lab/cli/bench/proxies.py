"""`fairstream bench proxies`: groups known only as probabilities, on calibrated streams and on the BISG lending stream."""

from __future__ import annotations

import click

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.proxies.streams import GROUPS, RATES, THRESHOLD, study


@click.command()
@click.option("--runs", default=200, show_default=True, type=click.IntRange(10), help="Simulated streams per measure.")
@click.option("--trials", default=3000, show_default=True, type=click.IntRange(100), help="Trials per stream.")
@click.option("--looks", default=10, show_default=True, type=click.IntRange(1), help="Evenly spaced looks of the anytime verdicts and sequences.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@click.option("--figure", "figure", default=None, type=click.Path(dir_okay=False), help="Also draw the BISG lending stream's gaps to this PNG (needs the bisg extra).")
@click.option("--applicants", default=20_000, show_default=True, type=click.IntRange(1000), help="Applicants of the lending stream drawn with --figure.")
@reports_errors
def proxies(runs: int, trials: int, looks: int, seed: int, figure: str | None, applicants: int) -> None:
    """Calibrated proxy streams (three groups, rates 0.60 / 0.45 / 0.52, Dirichlet(0.6) vectors, the true group drawn
    from each): how often each group's interval misses its rate, the verdicts' false alarms at a gap of exactly ε, the
    bounds' misses, and the gap the weighted rates report against the moments' and the truth."""
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
    if figure is not None:
        from fairstream.lab.proxies.lending import lending_gaps, write_lending_figure

        gaps = lending_gaps(applicants, seed)
        console.console.print(f"wrote {write_lending_figure(gaps, figure)}: true gap {gaps.truth:.3f}, at the end weighted {gaps.weighted[-1]:.3f}, moments {gaps.moments[-1]:.3f} ± {gaps.half_width[-1]:.3f}", soft_wrap=True)
