"""Throughput of the monitor against its own read+parse ceiling and against a hand-written single loop of the same
computation, on one generated COMPAS-shaped stream, each flow in a fresh process.

The machine's speed drifts by tens of percent over minutes, so the ratio is measured in rounds: each round runs both
flows back to back (the order rotates) and gives one ratio of each kind; the median over rounds is reported.

Each round also times whole processes from start to exit, imports, start-up and output included: `fairstream run` on
the stream, and the hand-written loop's file run as a plain script (it imports orjson and the standard library only).
"""

from __future__ import annotations

import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.compas_like import compas_like_events
from fairstream.paths import SPECS_DIR
from fairstream.records.envelope import ESTIMATE, RECOVERED, VIOLATION
from fairstream.records.errors import FairstreamError, InputError

SPEC = SPECS_DIR / "compas_equalized_odds.yaml"
"""The monitor under test: equalized odds of COMPAS-shaped scores across race groups."""

PER_DAY = 250.0
"""Screenings a day in the generated stream: 1 M events span about seven years, with ~180 k trials open at a time."""

SEED = 2013


@dataclass(frozen=True)
class Run:
    """One flow run in its own process: records read, seconds inside `run_main`, RSS after imports and at peak, and what reached the sink."""

    flow: str
    events: int
    seconds: float
    start_rss_mib: float
    peak_rss_mib: float
    counts: dict[str, int]
    gaps: dict[str, list[float | None]]
    """Per evaluated day, the false- and true-positive rate gaps (monitor and hand loop)."""

    @property
    def rate(self) -> float:
        """Events per second."""
        return self.events / self.seconds


@dataclass(frozen=True)
class FlowResult:
    """All runs of one flow; the figures reported are medians over them."""

    flow: str
    runs: tuple[Run, ...]

    @property
    def events(self) -> int:
        return self.runs[0].events

    @property
    def rate(self) -> float:
        return statistics.median(run.rate for run in self.runs)

    @property
    def rate_range(self) -> tuple[float, float]:
        """Slowest and fastest run, to show how noisy the machine was."""
        rates = [run.rate for run in self.runs]
        return min(rates), max(rates)

    @property
    def seconds(self) -> float:
        return statistics.median(run.seconds for run in self.runs)

    @property
    def start_rss_mib(self) -> float:
        return statistics.median(run.start_rss_mib for run in self.runs)

    @property
    def peak_rss_mib(self) -> float:
        return statistics.median(run.peak_rss_mib for run in self.runs)

    @property
    def counts(self) -> dict[str, int]:
        return self.runs[-1].counts


@dataclass(frozen=True)
class ThroughputResult:
    """The passthrough ceiling, the full monitor and the hand-written loop on the same stream."""

    events: int
    path: Path | None
    passthrough: FlowResult
    monitor: FlowResult
    hand: FlowResult
    whole_run: tuple[float, ...] = ()
    """Seconds of each round's whole `fairstream run` process."""
    whole_hand: tuple[float, ...] = ()
    """Seconds of each round's whole hand-loop process."""

    @property
    def whole_ratios(self) -> list[float]:
        """How many times faster the whole `fairstream run` was than the whole hand-loop process, per round."""
        return [hand / run for run, hand in zip(self.whole_run, self.whole_hand)]

    @property
    def whole_ratio(self) -> float:
        """The median over rounds (the target: at least 2.0)."""
        return statistics.median(self.whole_ratios)

    def ratios_to(self, other: FlowResult) -> list[float]:
        """Monitor events/s over `other`'s events/s in each round (runs of one round pair up)."""
        return [monitor.rate / run.rate for run, monitor in zip(other.runs, self.monitor.runs)]

    @property
    def ratios(self) -> list[float]:
        """Monitor events/s over passthrough events/s in each round."""
        return self.ratios_to(self.passthrough)

    @property
    def ratio(self) -> float:
        """The median over rounds of monitor events/s over passthrough events/s (the target: at least 0.8)."""
        return statistics.median(self.ratios)

    @property
    def hand_ratios(self) -> list[float]:
        """Monitor events/s over the hand-written loop's events/s in each round."""
        return self.ratios_to(self.hand)

    @property
    def hand_ratio(self) -> float:
        """The median over rounds of monitor events/s over hand-loop events/s (the target: at least 1.0)."""
        return statistics.median(self.hand_ratios)

    @property
    def gap_difference(self) -> float | None:
        """The largest difference between the monitor's and the hand loop's daily gaps, or None when they evaluated
        different days (or a gap only one of them has)."""
        monitor, hand = self.monitor.runs[-1].gaps, self.hand.runs[-1].gaps
        if monitor.keys() != hand.keys():
            return None
        largest = 0.0
        for day, gaps in monitor.items():
            for ours, theirs in zip(gaps, hand[day]):
                if (ours is None) != (theirs is None):
                    return None
                if ours is not None:
                    largest = max(largest, abs(ours - theirs))
        return largest

    @property
    def alerts(self) -> int:
        """Violation and recovery records the monitor produced."""
        counts = self.monitor.counts
        return counts.get(VIOLATION, 0) + counts.get(RECOVERED, 0)

    @property
    def estimates(self) -> int:
        """Periodic estimate records the monitor produced."""
        return self.monitor.counts.get(ESTIMATE, 0)

    @property
    def trials_closed(self) -> int:
        """Closed trials in the monitor's last estimate: one per generated defendant."""
        return self.monitor.counts.get("trials_closed", 0)


def measure_throughput(
    events: int = 1_000_000,
    *,
    repeat: int = 1,
    keep: str | Path | None = None,
    seed: int = SEED,
    on_step: Callable[[str], None] = lambda _step: None,
) -> ThroughputResult:
    """Generate `events` COMPAS-shaped events once (into `keep`, or a temporary file), then run `repeat` rounds of both flows."""
    if events < 1 or repeat < 1:
        raise InputError(f"events and repeat must be at least 1; got events={events}, repeat={repeat}")
    with tempfile.TemporaryDirectory(prefix="fairstream-bench-") as scratch:
        path = Path(keep) if keep is not None else Path(scratch) / "compas_like.jsonl"
        on_step(f"generating {events:,} COMPAS-shaped events into {path}")
        write_compas_like(path, events, seed)
        runs: dict[str, list[Run]] = {"passthrough": [], "monitor": [], "hand": []}
        whole: dict[str, list[float]] = {"run": [], "hand": []}
        for round_ in range(1, repeat + 1):
            shift = (round_ - 1) % len(runs)
            order = list(runs)[shift:] + list(runs)[:shift]
            for flow in order:
                on_step(f"round {round_}/{repeat}: {flow} over {events:,} events")
                run = _run_to_end(flow, path)
                if run.events != events:
                    raise FairstreamError(f"the {flow} flow read {run.events:,} of the {events:,} events; its rate would mislead")
                runs[flow].append(run)
            for process in ("run", "hand") if round_ % 2 else ("hand", "run"):
                on_step(f"round {round_}/{repeat}: whole {process} process over {events:,} events")
                whole[process].append(_whole_process(process, path, Path(scratch) / "run-out"))
    return ThroughputResult(
        events=events,
        path=Path(keep) if keep is not None else None,
        passthrough=FlowResult("passthrough", tuple(runs["passthrough"])),
        monitor=FlowResult("monitor", tuple(runs["monitor"])),
        hand=FlowResult("hand loop", tuple(runs["hand"])),
        whole_run=tuple(whole["run"]),
        whole_hand=tuple(whole["hand"]),
    )


def write_compas_like(path: Path, events: int, seed: int = SEED) -> None:
    """`events` COMPAS-shaped events, `PER_DAY` screenings a day, as JSON lines (at least one event per defendant)."""
    write_jsonl(path, itertools.islice(compas_like_events(events, seed, per_day=PER_DAY), events))


def _whole_process(process: str, path: Path, out: Path) -> float:
    """Seconds from starting the process to its exit: `fairstream run` on the stream, or the hand loop's file as a script."""
    if process == "run":
        command = [sys.executable, "-m", "fairstream.cli", "run", str(SPEC), "--input", str(path), "--out", str(out)]
    else:
        command = [sys.executable, str(Path(__file__).with_name("hand_loop.py")), str(path)]
    started = time.perf_counter()
    run_to_end(command, f"the whole {process} process")
    return time.perf_counter() - started


def run_to_end(command: list[str], what: str) -> subprocess.CompletedProcess:
    """Run a benchmark process to its end; one that fails raises with the end of its stderr."""
    child = subprocess.run(command, capture_output=True, text=True)
    if child.returncode != 0:
        tail = "\n".join(child.stderr.strip().splitlines()[-5:])
        raise FairstreamError(f"{what} failed (exit code {child.returncode}):\n{tail}")
    return child


def _run_to_end(flow: str, path: Path) -> Run:
    """Run one flow in a fresh interpreter, so its peak RSS is its own."""
    child = run_to_end([sys.executable, "-m", "fairstream.lab.bench.measure", flow, str(SPEC), str(path)], f"the {flow} benchmark process")
    found: dict[str, Any] = orjson.loads(child.stdout.strip().splitlines()[-1])
    return Run(
        flow=flow,
        events=found["events"],
        seconds=found["seconds"],
        start_rss_mib=found["rss_before_kib"] / 1024,
        peak_rss_mib=found["peak_rss_kib"] / 1024,
        counts=found["counts"],
        gaps=found["gaps"],
    )
