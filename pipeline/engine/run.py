"""Running a plain-engine dataflow in this thread: every input partition read in turn, each batch pushed through the
steps to the sinks, keys woken when they asked to be, and at the end of every input each stateful step told so, in the
order the steps were made. One worker, no recovery store: those need bytewax."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from fairstream.engine.bases import DynamicSink, FixedPartitionedSink
from fairstream.engine.graph import Dataflow
from fairstream.records.errors import UsageError

IDLE_PAUSE = 0.001
"""Seconds the loop sleeps when no partition had anything and nothing is due sooner."""


class EngineLimit(UsageError):
    """What only bytewax does was asked of the plain engine (exit code 2, as a usage error)."""


def check_plain(*, processes: int = 1, recovery: bool = False) -> None:
    """Refuse, before anything starts, a run the plain engine cannot do: several processes or a recovery store."""
    if processes > 1:
        raise EngineLimit("several processes need bytewax, which does not install on this Python (3.11 or 3.12 has it)")
    if recovery:
        raise EngineLimit("a recovery store and resuming need bytewax, which does not install on this Python (3.11 or 3.12 has it)")


def run_main(flow: Dataflow, *, epoch_interval: Any = None, recovery_config: Any = None) -> None:
    """Run `flow` to the end of its inputs (bytewax's `run_main`; `epoch_interval` is accepted and unused)."""
    check_plain(recovery=recovery_config is not None)
    sinks = [_sink_writer(step_id, sink, stream) for step_id, sink, stream in flow.outputs]
    parts = [(source, source.build_part(step_id, name, None), stream) for step_id, source, stream in flow.inputs for name in source.list_parts()]
    try:
        _read_all(flow, parts)
        for step in flow.stateful:
            step.end()
    finally:
        for _source, part, _stream in parts:
            part.close()
        for close in sinks:
            close()


def cluster_main(flow: Dataflow, addresses: list[str], proc_id: int, *, epoch_interval: Any = None, recovery_config: Any = None, worker_count_per_proc: int = 1) -> None:
    """bytewax's `cluster_main` for a cluster of one process: its workers become one (their records are the same)."""
    check_plain(processes=len(addresses))
    run_main(flow, epoch_interval=epoch_interval, recovery_config=recovery_config)


def _read_all(flow: Dataflow, parts: list[tuple[Any, Any, Any]]) -> None:
    live = list(parts)
    while live:
        read_any = False
        for entry in list(live):
            _source, part, stream = entry
            awake = part.next_awake()
            if awake is not None and awake > datetime.now(UTC):
                continue
            try:
                batch = part.next_batch()
            except StopIteration:
                live.remove(entry)
                continue
            if batch:
                read_any = True
                stream.push(list(batch))
        now = datetime.now(UTC)
        for step in flow.stateful:
            step.wake_due(now)
        if not read_any and live:
            time.sleep(_pause(flow, live))


def _pause(flow: Dataflow, live: list[tuple[Any, Any, Any]]) -> float:
    """Seconds until a partition or a key asks to be woken, at most `IDLE_PAUSE`."""
    now = datetime.now(UTC)
    times = [at for at in (part.next_awake() for _source, part, _stream in live) if at is not None]
    times += [at for at in (step.next_wake() for step in flow.stateful) if at is not None]
    soonest = min(((at - now).total_seconds() for at in times), default=IDLE_PAUSE)
    return max(0.0, min(IDLE_PAUSE, soonest))


def _sink_writer(step_id: str, sink: Any, stream: Any) -> Any:
    """Subscribe the sink's partitions to `stream`; returns what closes them."""
    if isinstance(sink, FixedPartitionedSink):
        names = sink.list_parts()
        parts: dict[int, Any] = {}  # built at their first item, as bytewax builds them: no empty files

        def write(items: list[tuple[str, Any]]) -> None:
            routed: dict[int, list[Any]] = {}
            for key, value in items:
                routed.setdefault(sink.part_fn(key) % len(names), []).append(value)
            for index, values in routed.items():
                if index not in parts:
                    parts[index] = sink.build_part(step_id, names[index], None)
                parts[index].write_batch(values)

        stream.listeners.append(write)
        return lambda: [part.close() for part in parts.values()]
    if isinstance(sink, DynamicSink):
        part = sink.build(step_id, 0, 1)
        stream.listeners.append(part.write_batch)
        return part.close
    raise TypeError(f"the plain engine cannot write to {type(sink).__name__}")
