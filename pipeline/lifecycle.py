"""Stopping on request: SIGINT or SIGTERM ends a run cleanly instead of unwinding through the dataflow runtime.

The first signal only sets a flag. The sources see it and end their partitions; the trial and shield steps then keep
their state instead of closing every open trial as the end of an input would, the sink writes what it was given, and
bytewax takes its last snapshot, so a run resumed from the same recovery store goes on where this one stopped. A
second signal stops at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_requested = threading.Event()
_signal_name: list[str] = []


def stop_requested() -> bool:
    return _requested.is_set()


def stopped_by() -> str | None:
    """The name of the signal that stopped the run (SIGINT, SIGTERM), or None."""
    return _signal_name[0] if _signal_name else None


@contextmanager
def stopping(also: Callable[[int], None] = lambda _signum: None) -> Iterator[None]:
    """While the block runs, the first SIGINT or SIGTERM is a stop request (then `also` is called with it, e.g. to pass
    it on to worker processes) and a second one stops the process at once; the previous handlers come back after."""
    _requested.clear()
    _signal_name.clear()

    def request(signum: int, _frame: object) -> None:
        if _requested.is_set():
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)
            return
        _signal_name.append(signal.Signals(signum).name)
        _requested.set()
        also(signum)

    if threading.current_thread() is not threading.main_thread():  # only the main thread may handle signals
        yield
        return
    previous = {signum: signal.signal(signum, request) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
