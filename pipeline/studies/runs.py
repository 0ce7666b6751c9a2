"""Run a bundled spec's monitor in this process over in-memory events, with its estimator or threshold replaced for a study."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bytewax.testing import TestingSink, run_main

from fairstream.connectors.files import RecordSource
from fairstream.dataflow.flow import build_flow
from fairstream.language.load import parse_spec
from fairstream.language.plan import Plan, build_plan
from fairstream.language.yaml_file import read_yaml


def tuned_plan(path: Path, *, threshold: float | None = None, **estimator: Any) -> Plan:
    """The spec at `path` with the given estimator fields (confidence, prior, verdict, …) replaced, and ε when given."""
    source = str(path)
    spec = parse_spec(read_yaml(path), source)
    metric = {} if threshold is None else {"threshold": threshold}
    spec = spec.model_copy(
        update={
            "estimator": spec.estimator.model_copy(update={name: value for name, value in estimator.items() if value is not None}),
            "metric": spec.metric.model_copy(update=metric),
        }
    )
    return build_plan(spec, source)


def unsuppressed(plan: Plan) -> Plan:
    """The plan with every cell published whatever its size: a study reads the counts of small groups too."""
    return replace(plan, monitor=replace(plan.monitor, min_cell=1))


def monitor_records(plan: Plan, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every record the monitor flow emits over `events`, run in this process, with every cell's counts (a study
    publishes nothing, so no cell is suppressed)."""
    records: list[dict[str, Any]] = []
    run_main(build_flow(unsuppressed(plan), RecordSource(lambda: events, batch_size=1000), TestingSink(records)))
    return records


def standard_error(rate: float, runs: int) -> float:
    """The Monte Carlo standard error of a rate estimated from `runs` independent runs."""
    return math.sqrt(rate * (1 - rate) / runs) if runs else math.nan
