"""The plain engine's dataflow: steps wired in the order they were made, which is an order every step's inputs come
before it in; `operators` adds them, `run` pushes batches through them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stream:
    """One step's output: the steps it feeds subscribe to it."""

    flow: Dataflow
    step_id: str
    listeners: list[Callable[[list[Any]], None]] = field(default_factory=list)

    def push(self, items: list[Any]) -> None:
        if items:
            for listener in self.listeners:
                listener(items)


@dataclass(frozen=True)
class Step:
    """A step as bytewax names it: `<flow id>.<step id>`."""

    step_id: str


@dataclass
class Dataflow:
    """A named graph of steps (`substeps`, in the order made): its inputs (each a source), its stateful steps and its
    outputs (each a sink)."""

    flow_id: str
    substeps: list[Step] = field(default_factory=list)
    inputs: list[tuple[str, Any, Stream]] = field(default_factory=list)
    stateful: list[Any] = field(default_factory=list)
    outputs: list[tuple[str, Any, Stream]] = field(default_factory=list)

    def stream(self, step_id: str) -> Stream:
        """A new step and its output stream; a step id used twice is the same mistake bytewax refuses."""
        self.step(step_id)
        return Stream(self, step_id)

    def step(self, step_id: str) -> None:
        full = f"{self.flow_id}.{step_id}"
        if any(step.step_id == full for step in self.substeps):
            raise ValueError(f"step id {step_id!r} is used twice in dataflow {self.flow_id!r}")
        self.substeps.append(Step(full))
