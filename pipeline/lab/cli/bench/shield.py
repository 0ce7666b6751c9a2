"""`fairstream bench shield`: per-decision cost of the shield step, and synthesis time against the horizon."""

from __future__ import annotations

from contextlib import ExitStack

import click
import numpy as np

from fairstream.cli import console
from fairstream.cli.console import reports_errors
from fairstream.cli.kafka_options import kafka_options
from fairstream.connectors.broker import kafka_or_local
from fairstream.lab.bench.shield import FINHZN_HORIZONS, GROUP_HORIZONS, LatencyProbe, measure_shield
from fairstream.lab.bench.shield_latency import CALLERS

TARGETS = {"over HTTP": "≤ 10 ms (quiet machine)", "through Kafka": "≤ 100 ms (quiet machine)"}


def horizons(_context: click.Context, _param: click.Parameter, text: str) -> list[int]:
    """Comma-separated positive horizons; empty for none."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"horizons are whole numbers separated by commas; got {text!r}") from None
    if any(value < 1 for value in values):
        raise click.BadParameter(f"horizons are at least 1; got {text!r}")
    return values


@click.command()
@click.option("--decisions", default=200_000, show_default=True, type=click.IntRange(1000), help="Decisions through each flow.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1), help="Runs of each flow; medians are reported.")
@click.option(
    "--group-horizons", default=",".join(map(str, GROUP_HORIZONS)), show_default=True, callback=horizons, help="Horizons T of the two-group synthesis (4,000 streams)."
)
@click.option(
    "--finhzn-horizons", default=",".join(map(str, FINHZN_HORIZONS)), show_default=True, callback=horizons, help="Horizons T of FinHzn's table (memory grows as T⁴)."
)
@click.option("--latency-rate", default=2_000, show_default=True, type=click.IntRange(1), help="Decisions per second in the latency probe.")
@click.option("--latency-seconds", default=10.0, show_default=True, type=click.FloatRange(1), help="Length of the latency probe.")
@click.option("--kafka/--no-kafka", default=True, show_default=True, help="Also probe the latency through Kafka (a local broker unless one is given).")
@kafka_options("Kafka to probe the latency through (default: a local tansu broker started for the run).")
@reports_errors
def shield(
    decisions: int,
    repeat: int,
    group_horizons: list[int],
    finhzn_horizons: list[int],
    latency_rate: int,
    latency_seconds: float,
    kafka: bool,
    bootstrap: str | None,
    kafka_config: str | None,
) -> None:
    """Shield step vs passthrough (same source and parsing) in one run, synthesis time vs T — one group, two groups
    (target: under 1 s at T = 5,000) and FinHzn (the largest T it fills in 10 s) — and each decision's wait for its
    answer at a steady rate, in process, over HTTP (`shield serve`) and through Kafka."""
    with console.progress() as bar, ExitStack() as stack:
        task = bar.add_task("starting", total=None)
        connection = stack.enter_context(kafka_or_local(bootstrap, kafka_config)) if kafka else None
        probe = LatencyProbe(latency_rate, latency_seconds, connection, kafka_config)
        result = measure_shield(decisions, repeat, lambda step: bar.update(task, description=step), group_horizons, finhzn_horizons, probe)
    console.table(
        f"Shield step, {result.decisions:,} hiring decisions (median of {repeat})",
        ["flow", "seconds", "decisions/s"],
        [
            ("passthrough (read, parse)", result.passthrough_seconds, f"{result.decisions / result.passthrough_seconds:,.0f}"),
            ("shield (read, parse, order, shield, records)", result.shield_seconds, f"{result.decisions / result.shield_seconds:,.0f}"),
        ],
        right=(1, 2),
    )
    console.console.print(f"overhead: {result.overhead_us:.1f} µs per decision; shield / passthrough rate: {result.ratio:.2f}")
    console.table(
        "Synthesis time (p 0.3, S [0.4, 0.6], L [0.45, 0.55], λ 0.05)",
        ["horizon T", "seconds"],
        [(horizon, seconds) for horizon, seconds in result.synthesis_seconds.items()],
        right=(0, 1),
    )
    if result.group_synthesis:
        console.table(
            "Two-group synthesis (rates 0.6, 0.3, equal shares, S [-0.1, 0.1], τ 100, λ 0.05; 4,000 streams, 99 % confidence)",
            ["horizon T", "seconds", "members", "member α", "bound"],
            [(f"{horizon:,}", found.seconds, found.evaluated, f"{found.alpha:.4f}", f"{found.bound:.4f}") for horizon, found in result.group_synthesis.items()],
            right=(0, 1, 2, 3, 4),
        )
    if result.finhzn_seconds:
        console.table(
            "FinHzn value table (equal shares, rates 0.6 and 0.3, κ 0.1)",
            ["horizon T", "seconds", "table MiB"],
            [(horizon, seconds, f"{size / 2**20:,.0f}") for horizon, (seconds, size) in result.finhzn_seconds.items()],
            right=(0, 1, 2),
        )
        within = [horizon for horizon, (seconds, _size) in result.finhzn_seconds.items() if seconds <= 10]
        console.console.print(f"largest T filled within 10 s: {max(within) if within else 'none of those tried'}")
    console.table(
        f"Decision → shielded decision at {result.latency_rate:,} decisions/s (the first tenth left out)",
        ["path", "p50 ms", "p99 ms", "decisions", "p99 target"],
        [(path, *_quantiles(latencies), f"{len(latencies):,}", TARGETS.get(path, "")) for path, latencies in result.latency_ms.items()],
        right=(1, 2, 3),
    )
    if result.http_rate is not None:
        console.console.print(f"over HTTP as fast as {CALLERS} callers get answers: {result.http_rate:,.0f} decisions/s")


def _quantiles(latencies: list[float]) -> tuple[str, str]:
    """p50 and p99 as printed, or why they are missing."""
    if not latencies:
        return "no answer came back", ""
    return f"{float(np.quantile(latencies, 0.5)):.1f}", f"{float(np.quantile(latencies, 0.99)):.1f}"
