"""`fairstream shield tables`: the fairness-shield paper's Tables 2 and 3 regenerated in its setup, beside its numbers
(needs the `studies` and `classifiers` extras)."""

from __future__ import annotations

import csv
import json
import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import click
import numpy as np

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.lab.cli.shield_compare import NameList
from fairstream.lab.figures.paper_tables import write_table_2
from fairstream.lab.periodic.finhzn import EMPTY
from fairstream.lab.studies.fair_training import CLASSIFIERS, PAPER_NAMES
from fairstream.lab.studies.paper_setup import ENVIRONMENTS, STREAMS, Scored, scored
from fairstream.lab.studies.paper_tables import (
    FAIRNESS,
    HORIZON,
    HORIZON_RUNS,
    KAPPAS,
    PAPER_TABLE_3,
    PERIOD,
    PERIODIC,
    PERIODS,
    RUNS,
    TABLE_2_COLUMNS,
    TABLE_KAPPA,
    Outcome,
    horizon_violations,
    paper_table_2,
    records,
    rejecting_all_loss,
    run_setting,
    settings,
    table_2,
    table_3,
)
from fairstream.lab.studies.portable_torch import kernels
from fairstream.lab.studies.shields import parity_path

ABBREVIATION = {"demographic_parity": "DP", "equal_opportunity": "EqOpp"}
PAPER_HORIZON_VIOLATIONS = {"demographic_parity": 44.0, "equal_opportunity": 65.0}


class Kappas(click.ParamType):
    """Comma-separated thresholds κ in (0, 1), e.g. 0.05,0.1."""

    name = "K,K"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[float, ...]:
        if isinstance(value, tuple):
            return value
        try:
            kappas = tuple(float(item) for item in str(value).split(","))
        except ValueError:
            self.fail(f"expected comma-separated numbers such as 0.05,0.1; got {value!r}", param, ctx)
        if not all(0 < kappa < 1 for kappa in kappas):
            self.fail(f"every κ must lie in (0, 1); got {value!r}", param, ctx)
        return kappas


def deviates(ours: float, paper: float) -> bool:
    """More than 2× apart either way (or of opposite signs).

    >>> deviates(1.0, 2.1), deviates(1.0, 1.9), deviates(-0.2, 0.5)
    (True, False, True)
    """
    if ours * paper <= 0:
        return abs(ours - paper) > 1e-9
    return max(abs(ours), abs(paper)) > 2 * min(abs(ours), abs(paper))


def _cell(ours: float | None, paper: float | None) -> str:
    if ours is None or math.isnan(ours):
        return "–"
    if paper is None:
        return f"{ours:.2f}"
    return f"{ours:.2f} / {paper:.2f}" + (" †" if deviates(ours, paper) else "")


def _final_gap(data: Scored, counted: np.ndarray | None = None) -> float:
    """The proposals' gap over every streamed row (over the `counted` ones: the qualified, for equal opportunity)."""
    return float(parity_path(data.proposed, data.sensitive == 0, counted)[-1])


def _write(outcomes: Sequence[Outcome], out_dir: Path, summary: dict) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = records(outcomes)
    runs = out_dir / "runs.csv"
    with runs.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    tables = out_dir / "tables.json"
    tables.write_text(json.dumps(summary, indent=2, allow_nan=False) + "\n")
    return [runs, tables, write_table_2(table_2(outcomes), out_dir / "table2.png", summary["setup"]["empty_group"])]


@click.command(name="tables")
@click.option("--environments", default=",".join(ENVIRONMENTS), show_default=True, type=NameList(ENVIRONMENTS, "environment"), help="Data sets and sensitive attributes: the paper's rows but Bank Marketing.")
@click.option("--fairness", default=",".join(FAIRNESS), show_default=True, type=NameList(FAIRNESS, "property"), help="Properties to keep.")
@click.option("--classifiers", default=",".join(CLASSIFIERS), show_default=True, type=NameList(CLASSIFIERS, "classifier"), help="Classifiers whose decisions FinHzn shields (the periodic shields run on ERM's alone): diffdp, erm, hsic, laftr, pr (PRemover).")
@click.option("--kappas", default=",".join(map(str, KAPPAS)), show_default=True, type=Kappas(), help="Thresholds κ; Table 2 reads κ = 0.1, Table 3 pools them all.")
@click.option("--runs", default=RUNS, show_default=True, type=click.IntRange(1), help=f"Runs of the periodic shields ({PERIODS} periods of {PERIOD}) per setting.")
@click.option("--horizon-runs", default=HORIZON_RUNS, show_default=True, type=click.IntRange(1), help="Runs of FinHzn over one horizon (T = 100 DP, 75 EqOpp) per setting.")
@click.option("--periods", default=PERIODS, show_default=True, type=click.IntRange(1), help=f"Periods of {PERIOD} decisions per periodic run.")
@click.option(
    "--empty-group",
    "empty",
    default="zero",
    show_default=True,
    type=click.Choice(EMPTY),
    help="A gap while a group has no member counted (no qualified member, for EqOpp): zero, that group's rate read as 0, as the authors' code computes it (which made the published tables); vacuous, the gap 0, as the paper's text defines it.",
)
@click.option(
    "--stream",
    default="every-row",
    show_default=True,
    type=click.Choice(STREAMS),
    help="What runs stream: every-row, 40 % of them the classifiers' training rows, as the authors' simulation (it re-splits at random); held-out, the 60 % the classifiers never saw.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the runs' shuffles (run r draws from the pair (SEED, r)).")
@click.option("--jobs", default=os.cpu_count() or 1, show_default="the CPU count", type=click.IntRange(1), help="Worker processes, one setting each at a time.")
@click.option("--out", "out_dir", default="out/shield-tables", show_default=True, type=click.Path(file_okay=False), help="Directory for runs.csv, tables.json and table2.png.")
@reports_errors
def tables_command(
    environments: tuple[str, ...],
    fairness: tuple[str, ...],
    classifiers: tuple[str, ...],
    kappas: tuple[float, ...],
    runs: int,
    horizon_runs: int,
    periods: int,
    empty: str,
    stream: str,
    seed: int,
    jobs: int,
    out_dir: str,
) -> None:
    """Regenerate the fairness-shield paper's Table 2 (utility loss at κ = 0.1 of FinHzn on each classifier's decisions
    and of the periodic shields on ERM's) and Table 3 (how often each periodic shield's assumption and fairness held),
    each cell beside the paper's; † marks a cell more than 2× from the paper's.

    Each environment's rows are split 40/60 (stratified, seed 1314); the paper's five classifiers (ERM and the fair
    trainers DiffDP, HSIC, LAFTR, PRemover) are trained on the 40 % as the Fair Fairness Benchmark trains them, and
    every run streams a fresh shuffle of every row, as the authors' simulation does (--stream held-out: of the 60 %
    alone). The shields are synthesized for the paper's constant-cost model and
    flip with certainty where flipping is cheaper; a flip costs |score − ½|. A group with no member counted reads as
    rate 0, as in the authors' code (--empty-group vacuous: the gap 0, as in the paper's text).
    """
    started = time.perf_counter()
    if kernels() != "portable":
        console.warning(f"torch computed before the kernels were pinned: the networks are this CPU's ({kernels()}), and another machine may train others")
    # each network trained once, here: a missing data file fails in one line before any work, and the workers, forked
    # after, find the trained networks in their copy of the cache
    streamed = {(name, classifier): scored(name, stream, classifier=classifier) for name in environments for classifier in classifiers}
    work = settings(environments, fairness, kappas, empty, stream, classifiers)
    outcomes: list[Outcome] = []
    with console.progress() as progress:
        task = progress.add_task("settings", total=len(work))
        if jobs == 1:
            for setting in work:
                outcomes += run_setting(setting, runs, horizon_runs, periods, seed)
                progress.advance(task)
        else:
            with ProcessPoolExecutor(min(jobs, len(work))) as pool:
                futures = [pool.submit(run_setting, setting, runs, horizon_runs, periods, seed) for setting in work]
                for future in futures:
                    outcomes += future.result()
                    progress.advance(task)
    elapsed = time.perf_counter() - started
    console.table(
        f"The classifiers' proposals on the streamed rows ({stream})",
        ["environment", "classifier", "accuracy", "DP gap", "EqOpp gap", "rejecting all (%)"],
        [
            [ENVIRONMENTS[name].name, PAPER_NAMES[classifier], f"{data.accuracy:.3f}", f"{_final_gap(data):.3f}", f"{_final_gap(data, data.labels == 1):.3f}", f"{rejecting_all_loss(data):.2f}"]
            for (name, classifier), data in streamed.items()
        ],
        right=(2, 3, 4, 5),
    )
    losses = table_2(outcomes)
    shown = [column for column in TABLE_2_COLUMNS if column in classifiers or (column in PERIODIC and "erm" in classifiers)]
    for f in fairness:
        console.table(
            f"Table 2, {ABBREVIATION[f]}: utility loss (%) at κ = {TABLE_KAPPA}, ours / the paper's (FinHzn: {horizon_runs} runs of T = {HORIZON[f]}; periodic, on ERM: {runs} runs of {periods} × {PERIOD})",
            ["environment", *(f"FinHzn: {PAPER_NAMES[c]}" if c in PAPER_NAMES else c for c in shown)],
            [[ENVIRONMENTS[name].name, *(_cell(losses.get((name, f, column)), paper_table_2(name, f, column)) for column in shown)] for name in environments],
            right=range(1, len(shown) + 1),
        )
    pooled = table_3(outcomes)
    if pooled:  # the periodic shields ran (on ERM's decisions)
        console.table(
            f"Table 3: periodic shields on ERM, runs pooled over {len(environments)} environment(s) and κ ∈ {{{', '.join(map(str, kappas))}}}, ours / the paper's (%)",
            ["property", "shield", "assumption satisfied", "fairness satisfied", "runs"],
            [
                [ABBREVIATION[f], shield, _cell(pooled[(f, shield)][0], PAPER_TABLE_3.get((f, shield), (None,))[0]), _cell(pooled[(f, shield)][1], PAPER_TABLE_3.get((f, shield), (None, None))[1]), pooled[(f, shield)][2]]
                for f in fairness
                for shield in ("unshielded", *PERIODIC)
            ],
            right=(2, 3, 4),
        )
    violations = horizon_violations(outcomes)
    for f in fairness:
        console.console.print(
            f"unshielded runs ending one horizon with the {ABBREVIATION[f]} gap above κ, {len(classifiers)} classifier(s) pooled: {violations[f]:.1f} % (the paper, every classifier: {PAPER_HORIZON_VIOLATIONS[f]:.0f} %)",
            markup=False,
            soft_wrap=True,
        )
    summary = {
        "table_2": [{"environment": e, "fairness": f, "column": c, "utility_loss": v, "paper": paper_table_2(e, f, c)} for (e, f, c), v in losses.items()],
        "table_3": [{"fairness": f, "shield": s, "assumption": a, "fair": p, "runs": n, "paper": PAPER_TABLE_3.get((f, s))} for (f, s), (a, p, n) in pooled.items()],
        "horizon_violations": violations,
        "setup": {"classifiers": list(classifiers), "kappas": list(kappas), "runs": runs, "horizon_runs": horizon_runs, "periods": periods, "period": PERIOD, "empty_group": empty, "stream": stream, "seed": seed, "kernels": kernels()},
    }
    for path in _write(outcomes, Path(out_dir), summary):
        console.console.print(f"wrote {path}", markup=False, soft_wrap=True)
    console.console.print(f"{len(work)} settings in {elapsed:.1f} s; † = more than 2× from the paper's number", markup=False)
