"""Cost of the shield: per-decision overhead of the shield step over a passthrough with the same source and parsing,
and synthesis time against the horizon T: one group, two groups (the shipped spec's problem) and FinHzn."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fairstream.compiler.load import load_plan
from fairstream.connectors.files import RecordSource, jsonl_lines, write_jsonl
from fairstream.connectors.kafka_config import KafkaConnection
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.dataflow.flow import parsed_stream
from fairstream.dataflow.shield_flow import build_shield_flow
from fairstream.engine.api import Dataflow, op, run_main
from fairstream.lab.bench import shield_latency
from fairstream.lab.bench.sink import CountingSink
from fairstream.lab.periodic.arrivals import ArrivalModel
from fairstream.lab.periodic.finhzn import FinHznShield
from fairstream.paths import SPECS_DIR
from fairstream.shields import MonotoneFamily, Target, synthesize
from fairstream.shields.energy.group_simulation import GroupProblem
from fairstream.shields.energy.group_synthesis import GroupSynthesis, synthesize_groups
from fairstream.shields.runtime.configured import configure

SPEC = SPECS_DIR / "hiring_energy_shield.yaml"
HORIZONS = (500, 1000, 2000, 5000)
GROUP_HORIZONS = (2000, 5000)
"""Horizons of the two-group synthesis: the shipped spec's problem, 4,000 simulated streams, 99 % confidence."""
FINHZN_HORIZONS = (50, 100, 150, 200, 240)
"""Horizons of FinHzn's dynamic programme, whose states grow as T⁴/24."""
GROUP_PROBLEM = GroupProblem(0.6, 0.3, 0.5, Target(100, (-0.1, 0.1), (-0.05, 0.05)))
FINHZN_MODEL = ArrivalModel.bernoulli(0.5, 0.6, 0.3)


@dataclass(frozen=True)
class ShieldBench:
    decisions: int
    passthrough_seconds: float
    shield_seconds: float
    synthesis_seconds: dict[int, float]
    group_synthesis: dict[int, GroupSynthesis]
    """Per horizon, the two-group synthesis of `GROUP_PROBLEM` (its seconds, member and bound)."""
    finhzn_seconds: dict[int, tuple[float, int]]
    """Per horizon, seconds to fill FinHzn's value table for `FINHZN_MODEL`, κ = 0.1, and the table's bytes."""
    latency_rate: int = 0
    latency_ms: dict[str, list[float]] = field(default_factory=dict)
    """Per path ("in process", "over HTTP", "through Kafka"), each decision's wait for its shielded record at `latency_rate` per second."""
    http_rate: float | None = None
    """Decisions per second answered over HTTP to callers that call as fast as they can."""

    @property
    def overhead_us(self) -> float:
        """Extra microseconds per decision for ordering and shielding it."""
        return (self.shield_seconds - self.passthrough_seconds) / self.decisions * 1e6

    @property
    def ratio(self) -> float:
        return self.passthrough_seconds / self.shield_seconds


@dataclass(frozen=True)
class LatencyProbe:
    """Decisions per second and seconds of the latency probe; `kafka` the broker to probe through, or None for none."""

    rate: int = 2000
    seconds: float = 10.0
    kafka: KafkaConnection | None = None
    kafka_config: str | None = None


def measure_shield(
    decisions: int = 200_000,
    repeat: int = 3,
    on_step: Callable[[str], None] = lambda _s: None,
    group_horizons: Sequence[int] = GROUP_HORIZONS,
    finhzn_horizons: Sequence[int] = FINHZN_HORIZONS,
    probe: LatencyProbe | None = None,
) -> ShieldBench:
    plan = load_plan(SPEC)
    on_step("synthesizing the spec's shield (once per process, before the first decision)")
    configure(plan.spec.shield)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "decisions.jsonl"
        on_step(f"generating {decisions:,} decisions")
        write_jsonl(path, hiring_decisions(decisions, p_male=0.5, p_female=0.2, seed=1))

        def passthrough() -> Dataflow:
            flow = Dataflow("passthrough")
            op.output("count", parsed_stream(flow, plan, RecordSource(jsonl_lines(path)), strings=False), CountingSink(lambda _c, _i: None))
            return flow

        def shielded() -> Dataflow:
            return build_shield_flow(plan, RecordSource(jsonl_lines(path)), CountingSink(lambda _c, _i: None))

        times: dict[str, list[float]] = {"passthrough": [], "shield": []}
        for round_ in range(repeat):
            for name, build in (("passthrough", passthrough), ("shield", shielded)):
                on_step(f"run {round_ + 1}/{repeat}: {name}")
                flow = build()
                started = time.perf_counter()
                run_main(flow)
                times[name].append(time.perf_counter() - started)
    synthesis = {}
    family = MonotoneFamily(0.3, Target(50, (0.4, 0.6), (0.45, 0.55)))
    for horizon in HORIZONS:
        on_step(f"synthesis for T = {horizon}")
        synthesis[horizon] = synthesize(family, lam=0.05, horizon=horizon).seconds
    groups = {}
    for horizon in group_horizons:
        on_step(f"two-group synthesis for T = {horizon:,}")
        groups[horizon] = synthesize_groups(GROUP_PROBLEM, lam=0.05, horizon=horizon)
    finhzn = {}
    for horizon in finhzn_horizons:
        on_step(f"FinHzn for T = {horizon}")
        started = time.perf_counter()
        table = FinHznShield(FINHZN_MODEL, horizon=horizon, kappa=0.1).values
        finhzn[horizon] = (time.perf_counter() - started, sum(layer.nbytes for layer in table))
        del table
    latency = {}
    if probe is not None:
        on_step(f"shield latency in process at {probe.rate:,} decisions/s for {probe.seconds:g} s")
        latency["in process"] = shield_latency.in_process(plan, probe.rate, probe.seconds)
        on_step(f"shield latency over HTTP at {probe.rate:,} decisions/s for {probe.seconds:g} s, then as fast as it answers")
        latency["over HTTP"], http_rate = shield_latency.over_http(str(SPEC), probe.rate, probe.seconds)
        if probe.kafka is not None:
            on_step(f"shield latency through Kafka at {probe.rate:,} decisions/s for {probe.seconds:g} s")
            latency["through Kafka"] = shield_latency.through_kafka(probe.kafka, probe.kafka_config, str(SPEC), probe.rate, probe.seconds)
    rate = probe.rate if probe is not None else 0
    return ShieldBench(
        decisions, statistics.median(times["passthrough"]), statistics.median(times["shield"]), synthesis, groups, finhzn, rate, latency,
        http_rate if probe is not None else None,
    )  # fmt: skip
