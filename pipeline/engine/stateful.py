"""A stateful step of the plain engine: one logic per key, told its items, woken at the time it asks for, and told
the end of its input."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from fairstream.engine.graph import Stream


class StatefulStep:
    def __init__(self, step_id: str, builder: Callable[[Any], Any], out: Stream):
        self.step_id = step_id
        self._builder = builder
        self._out = out
        self._logics: dict[Any, Any] = {}
        self._wake: dict[Any, datetime] = {}

    def take(self, items: list[tuple[Any, Any]]) -> None:
        for key, value in items:
            logic = self._logics.get(key)
            if logic is None:
                logic = self._logics[key] = self._builder(None)
            self._emit(key, *logic.on_item(value))

    def wake_due(self, now: datetime) -> None:
        """Call `on_notify` of every key whose asked-for time has come."""
        for key in [key for key, at in self._wake.items() if at <= now]:
            self._wake.pop(key, None)
            if key in self._logics:
                self._emit(key, *self._logics[key].on_notify())

    def next_wake(self) -> datetime | None:
        return min(self._wake.values(), default=None)

    def end(self) -> None:
        """The input ended: every key's `on_eof`, in the order the keys came."""
        for key in list(self._logics):
            self._emit(key, *self._logics[key].on_eof())
        self._wake.clear()

    def _emit(self, key: Any, items: Any, discard: bool) -> None:
        if discard:
            self._logics.pop(key, None)
            self._wake.pop(key, None)
        else:
            at = self._logics[key].notify_at()
            if at is None:
                self._wake.pop(key, None)
            else:
                self._wake[key] = at
        self._out.push([(key, item) for item in items])
