"""`fairstream tune`: trigger counts of the seminar monitor per assignment algorithm over a grid of κ and ε."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import click
import orjson

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.connectors.synthetic.seminar import ALGORITHMS
from fairstream.lab.figures.heatmap import write_heatmap
from fairstream.lab.studies.tuning import DEFAULT_SPEC, EPSILONS, FAIR, KAPPAS, UNFAIR, Tuning, ratio_label, run_tuning

REPORTED = ((30.0, 0.1), (80.0, 0.1))
"""Grid points whose Randomize/EqualGender ratio is printed (the RTLola study reports ≈ 6× and 187×)."""


class NumberList(click.ParamType):
    """Comma-separated numbers that each satisfy `check` (described by `rule`), returned sorted and without repeats."""

    name = "LIST"

    def __init__(self, rule: str, check: Callable[[float], bool]):
        self.rule = rule
        self.check = check

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[float, ...]:
        if isinstance(value, tuple):
            return value
        try:
            numbers = [float(item) for item in str(value).split(",")]
        except ValueError:
            self.fail(f"expected comma-separated numbers such as 10,30,54; got {value!r}", param, ctx)
        for number in numbers:
            if not self.check(number):
                self.fail(f"every value must be {self.rule}; got {number:g}", param, ctx)
        return tuple(sorted(set(numbers)))


@click.command()
@click.option("--scenarios", default=2000, show_default=True, type=click.IntRange(1), help="Scenarios (seeds 0..N-1) per algorithm.")
@click.option("--applicants", default=100, show_default=True, type=click.IntRange(1), help="Applicants per scenario.")
@click.option("--kappa", "kappas", default=",".join(f"{k:g}" for k in KAPPAS), show_default=True, type=NumberList("at least 0", lambda n: n >= 0), help="κ values: weight of the prior in pseudo-trials.")
@click.option("--epsilon", "epsilons", default=",".join(f"{e:g}" for e in EPSILONS), show_default=True, type=NumberList("in (0, 1]", lambda n: 0 < n <= 1), help="ε values: largest tolerated gap.")
@click.option(
    "--spec",
    default=DEFAULT_SPEC.stem,
    show_default=True,
    help="Spec over the seminar streams (a bundled name or a path): seminar_demographic_parity, as the RTLola paper's counts, "
    "or seminar_conditional_statistical_parity, per seminar.",
)
@click.option("--out", "out_dir", default="tuning", show_default=True, type=click.Path(file_okay=False), help="Directory for tuning.json and tuning.png.")
@reports_errors
def tune(scenarios: int, applicants: int, kappas: tuple[float, ...], epsilons: tuple[float, ...], spec: str, out_dir: str) -> None:
    """Count how often the seminar monitor triggers on FCFS, Randomize, Qualification and EqualGender assignments, per κ and ε.

    Every algorithm assigns the same generated scenarios; each run goes through the spec once and
    the verdicts of the whole grid are computed from its counts. A trigger is an evaluation (one per
    closed trial) with a violated verdict (in some seminar, for a per-seminar spec). The defaults,
    2,000 scenarios × 100 applicants per algorithm as in the RTLola study, take about 3 minutes.
    """
    started = time.perf_counter()
    with console.progress() as progress:
        task = progress.add_task("monitoring", total=len(ALGORITHMS) * scenarios)
        tuning = run_tuning(scenarios, applicants, kappas, epsilons, spec=spec, on_run=lambda: progress.advance(task))
    elapsed = time.perf_counter() - started
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tuning.json").write_bytes(orjson.dumps(tuning.to_json(), option=orjson.OPT_INDENT_2))
    png = write_heatmap(tuning, out / "tuning.png")

    console.console.print(f"spec: {spec} ({tuning.metric})", markup=False, soft_wrap=True)
    console.table(
        f"Triggers (scenarios with an alert) over {scenarios} scenarios × {applicants} applicants",
        ["κ", "ε", *tuning.algorithms, f"{UNFAIR}/{FAIR}"],
        _rows(tuning),
        right=range(len(tuning.algorithms) + 3),
    )
    for kappa, epsilon in REPORTED:
        point = tuning.point(kappa, epsilon)
        if point is not None:
            top, bottom = _pair(tuning, *point)
            console.console.print(f"{UNFAIR}/{FAIR} at κ = {kappa:g}, ε = {epsilon:g}: {ratio_label(top, bottom)} ({top} vs. {bottom} triggers)")
    console.console.print(f"wrote {out / 'tuning.json'} and {png}", markup=False, soft_wrap=True)
    console.console.print(f"{len(ALGORITHMS) * scenarios} monitor runs in {elapsed:.1f} s")


def _rows(tuning: Tuning) -> list[list[str]]:
    rows = []
    for k, kappa in enumerate(tuning.kappas):
        for e, epsilon in enumerate(tuning.epsilons):
            cells = [f"{tuning.triggers[a, k, e]} ({tuning.flagged[a, k, e]})" for a in range(len(tuning.algorithms))]
            rows.append([f"{kappa:g}", f"{epsilon:g}", *cells, _ratio(tuning, k, e)])
    return rows


def _ratio(tuning: Tuning, k: int, e: int) -> str:
    return ratio_label(*_pair(tuning, k, e))


def _pair(tuning: Tuning, k: int, e: int) -> tuple[int, int]:
    """Triggers of Randomize and of EqualGender at grid point (k, e)."""
    top, bottom = (int(tuning.triggers[tuning.algorithms.index(name), k, e]) for name in (UNFAIR, FAIR))
    return top, bottom
