"""Run a bundled spec's monitor in this process over in-memory events, with its estimator or threshold replaced for a study."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from scipy import stats

from fairstream.compiler.load import parse_spec
from fairstream.compiler.plan import Plan, build_plan
from fairstream.connectors.files import RecordSource
from fairstream.dataflow.flow import build_flow
from fairstream.engine.api import run_main
from fairstream.lab.bench.sink import CountingSink
from fairstream.language.yaml_file import read_yaml


def tuned_plan(path: Path, *, threshold: float | None = None, groups: list[str] | None = None, **estimator: Any) -> Plan:
    """The spec at `path` with the given estimator fields (confidence, prior, verdict, …) replaced, and ε and the
    metric's groups when given."""
    source = str(path)
    spec = parse_spec(read_yaml(path), source)
    metric = {name: value for name, value in (("threshold", threshold), ("groups", groups)) if value is not None}
    spec = spec.model_copy(
        update={
            "estimator": spec.estimator.model_copy(update={name: value for name, value in estimator.items() if value is not None}),
            "metric": spec.metric.model_copy(update=metric),
        }
    )
    return build_plan(spec, source)


def unsuppressed(plan: Plan) -> Plan:
    """The plan with every cell published whatever its size: a study reads the counts of small groups too."""
    return replace(plan, monitor=replace(plan.monitor, publishing=replace(plan.monitor.publishing, min_cell=1)))


def monitor_records(plan: Plan, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every record the monitor flow emits over `events`, run in this process, with every cell's counts (a study
    publishes nothing, so no cell is suppressed)."""
    records: list[dict[str, Any]] = []
    run_main(build_flow(unsuppressed(plan), RecordSource(lambda: events, batch_size=1000), CountingSink(lambda _counts, item: records.append(item))))
    return records


def standard_error(rate: float, runs: int) -> float:
    """The Monte Carlo standard error of a rate estimated from `runs` independent runs."""
    return math.sqrt(rate * (1 - rate) / runs) if runs else math.nan


def median_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median of what `values` sample: the order statistics X_(l) and X_(n−l+1),
    l the largest whole number with P(Bin(n, 1/2) < l) ≤ (1 − confidence)/2.

    >>> median_interval(list(range(1, 51)))
    (18, 33)
    """
    ordered = sorted(values)
    n = len(ordered)
    lowest = max(1, int(stats.binom.ppf((1 - confidence) / 2, n, 0.5)))
    while lowest > 1 and stats.binom.cdf(lowest - 1, n, 0.5) > (1 - confidence) / 2:
        lowest -= 1
    return ordered[lowest - 1], ordered[n - lowest]
