"""Readiness of this process's share of a run, for `/readyz`: ready once every input partition it was given has been
built (its recovery state loaded) and has answered its first read (its consumer assigned)."""

from __future__ import annotations

import threading

_lock = threading.Lock()
_built: set[str] = set()
_read: set[str] = set()


def reset() -> None:
    """A run starts: nothing is assigned yet."""
    with _lock:
        _built.clear()
        _read.clear()


def built(part: str) -> None:
    """An input partition was built from its recovery state (or from the start)."""
    with _lock:
        _built.add(part)


def first_read(part: str) -> None:
    with _lock:
        _read.add(part)


def given_away(part: str) -> None:
    """An input partition moved to another member of the consumer group."""
    with _lock:
        _built.discard(part)
        _read.discard(part)


def readiness() -> tuple[bool, str]:
    """Whether this process is ready, and one line saying why or why not."""
    with _lock:
        built_count, waiting = len(_built), sorted(_built - _read)
    if not built_count:
        return False, "no input partition assigned yet"
    if waiting:
        return False, f"{len(waiting)} of {built_count} input partition(s) not read yet (first: {waiting[0]})"
    return True, f"ready: {built_count} input partition(s) assigned and read"
