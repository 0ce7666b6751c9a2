"""The operators of the plain engine that the dataflow uses, with bytewax's names and arguments: each wires a step
into the graph and returns its output stream."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fairstream.engine.graph import Dataflow, Stream
from fairstream.engine.stateful import StatefulStep


def input(step_id: str, flow: Dataflow, source: Any) -> Stream:  # noqa: A001 - bytewax's name
    out = flow.stream(step_id)
    flow.inputs.append((step_id, source, out))
    return out


def map(step_id: str, up: Stream, mapper: Callable[[Any], Any]) -> Stream:  # noqa: A001 - bytewax's name
    out = up.flow.stream(step_id)
    up.listeners.append(lambda items: out.push([mapper(item) for item in items]))
    return out


def filter_map(step_id: str, up: Stream, mapper: Callable[[Any], Any | None]) -> Stream:
    out = up.flow.stream(step_id)
    up.listeners.append(lambda items: out.push([kept for kept in (mapper(item) for item in items) if kept is not None]))
    return out


def inspect(step_id: str, up: Stream, inspector: Callable[[str, Any], None]) -> Stream:
    out = up.flow.stream(step_id)

    def seen(items: list[Any]) -> None:
        for item in items:
            inspector(step_id, item)
        out.push(items)

    up.listeners.append(seen)
    return out


def key_rm(step_id: str, up: Stream) -> Stream:
    out = up.flow.stream(step_id)
    up.listeners.append(lambda items: out.push([value for _key, value in items]))
    return out


def merge(step_id: str, *ups: Stream) -> Stream:
    out = ups[0].flow.stream(step_id)
    for up in ups:
        up.listeners.append(out.push)
    return out


@dataclass(frozen=True)
class BranchOut:
    trues: Stream
    falses: Stream


def branch(step_id: str, up: Stream, predicate: Callable[[Any], bool]) -> BranchOut:
    up.flow.step(step_id)
    trues, falses = Stream(up.flow, f"{step_id}.trues"), Stream(up.flow, f"{step_id}.falses")

    def split(items: list[Any]) -> None:
        decided = [(bool(predicate(item)), item) for item in items]
        trues.push([item for kept, item in decided if kept])
        falses.push([item for kept, item in decided if not kept])

    up.listeners.append(split)
    return BranchOut(trues, falses)


def stateful(step_id: str, up: Stream, builder: Callable[[Any], Any]) -> Stream:
    """Per key of the `(key, value)` items, one `StatefulLogic` built by `builder(None)`; emits `(key, item)`."""
    out = up.flow.stream(step_id)
    step = StatefulStep(step_id, builder, out)
    up.flow.stateful.append(step)
    up.listeners.append(step.take)
    return out


def output(step_id: str, up: Stream, sink: Any) -> None:
    up.flow.step(step_id)
    up.flow.outputs.append((step_id, sink, up))
