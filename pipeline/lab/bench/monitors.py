"""Many monitors over one read of the input against one monitor alone: whole `fairstream run` processes over the same
generated COMPAS-shaped stream, once writing an estimate at every evaluation and once with a publishing cadence.

The monitors cycle through the bundled COMPAS specs (equalized odds by race, demographic parity by sex, the
disparate-impact ratio), each with its own threshold, so they share the input section, the parsing and the clock, and
monitors of one spec share their trials; their counts, verdicts and records are their own.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from fairstream.lab.bench.throughput import run_to_end, write_compas_like
from fairstream.paths import SPECS_DIR
from fairstream.records.errors import InputError

BASES = ("compas_equalized_odds", "compas_demographic_parity_sex", "compas_disparate_impact")
"""The specs the monitors are made from, in turn."""


def monitor_specs(count: int, folder: Path, publish_every: str | None) -> Path:
    """Write `count` monitors into `folder`: the bundled specs in turn, the n-th round's gap thresholds 5n % wider and
    ratio thresholds n % lower (ratio thresholds stay below 1), each under its own name."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        base = BASES[index % len(BASES)]
        spec = yaml.safe_load((SPECS_DIR / f"{base}.yaml").read_text())
        spec["monitor"] = f"{spec['monitor']}-{index}"
        threshold, round_ = spec["metric"]["threshold"], index // len(BASES)
        spec["metric"]["threshold"] = round(
            threshold * (1 - round_ / 100) if base.endswith("impact") else min(threshold * (1 + round_ / 20), 1.0), 6
        )
        if publish_every is not None:
            spec["publish"] = {**spec.get("publish", {}), "every": publish_every}
        (folder / f"monitor_{index:03d}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder


@dataclass(frozen=True)
class MonitorsResult:
    """Seconds of whole runs, per (monitors, cadence) over rounds."""

    events: int
    monitors: int
    publish_every: str
    seconds: dict[tuple[int, str | None], list[float]]

    def median(self, monitors: int, cadence: str | None) -> float:
        return statistics.median(self.seconds[(monitors, cadence)])

    def ratios(self, cadence: str | None) -> list[float]:
        """Per round, the many monitors' time over one monitor's."""
        return [many / one for many, one in zip(self.seconds[(self.monitors, cadence)], self.seconds[(1, cadence)], strict=True)]


def measure_monitors(
    events: int = 1_000_000,
    monitors: int = 50,
    *,
    publish_every: str = "30d",
    repeat: int = 1,
    on_step: Callable[[str], None] = lambda _step: None,
) -> MonitorsResult:
    """Generate the stream once, then per round run one monitor and `monitors` monitors, without and with the cadence."""
    if events < 1 or monitors < 2 or repeat < 1:
        raise InputError(
            f"events and repeat must be at least 1 and monitors at least 2; got events={events}, monitors={monitors}, repeat={repeat}"
        )
    seconds: dict[tuple[int, str | None], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="fairstream-bench-") as scratch:
        root = Path(scratch)
        stream = root / "compas_like.jsonl"
        on_step(f"generating {events:,} COMPAS-shaped events")
        write_compas_like(stream, events)
        cases = [(count, cadence) for cadence in (None, publish_every) for count in (1, monitors)]
        folders = {case: monitor_specs(case[0], root / f"specs-{case[0]}-{case[1] or 'every'}", case[1]) for case in cases}
        for round_ in range(1, repeat + 1):
            for case in cases if round_ % 2 else reversed(cases):
                count, cadence = case
                on_step(
                    f"round {round_}/{repeat}: {count} monitor(s), estimates {'every ' + cadence if cadence else 'at every evaluation'}"
                )
                seconds.setdefault(case, []).append(_whole_run(folders[case], stream, root / "out"))
    return MonitorsResult(events, monitors, publish_every, seconds)


def _whole_run(specs: Path, stream: Path, out: Path) -> float:
    """Seconds from starting `fairstream run` on the specs folder to its exit (the stream is in time order: read as it is)."""
    started = time.perf_counter()
    run_to_end([sys.executable, "-m", "fairstream.cli", "run", str(specs), "--input", str(stream), "--sorted", "--out", str(out)], f"fairstream run over {specs.name}")
    return time.perf_counter() - started
