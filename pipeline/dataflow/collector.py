"""Keep Python's garbage collector out of the event path: a job's long-lived objects (specs, compiled layouts, the
engine's own) are frozen once built, and the youngest generation is collected less often, since per-event objects
(records, events, batches) hold no reference cycles and are freed by reference counting as each batch is done."""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000
"""Allocations between collections of the youngest generation (CPython's default: 700)."""


def settle() -> None:
    """Freeze everything alive now into the permanent generation and space out young collections; call it once the
    dataflow is built, before it runs."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
