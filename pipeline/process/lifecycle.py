"""Stopping on request: SIGINT or SIGTERM ends a run cleanly instead of unwinding through the dataflow runtime. And
keeping the runtime's panic reports off stderr, where the error they carry is reported as one line instead.

The first signal only sets a flag. The sources see it and end their partitions; the trial and shield steps then keep
their state instead of closing every open trial as the end of an input would, the sink writes what it was given, and
bytewax takes its last snapshot, so a run resumed from the same recovery store goes on where this one stopped. A
second signal stops at once.
"""

from __future__ import annotations

import os
import re
import signal
import sys
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


_PANIC = re.compile(rb"^thread '.*' panicked at ")
_PANIC_END = re.compile(rb"^note: ")


def _forward(source: int, target: int) -> None:
    """Copy lines from `source` to `target`, leaving out each Rust panic report: its first line and what follows it
    (the payload, whatever its lines, and any backtrace) through the `note:` line Rust's report ends with."""
    in_panic = False
    with os.fdopen(source, "rb") as lines:
        for line in lines:
            if _PANIC.match(line):
                in_panic = True
            elif in_panic:
                in_panic = not _PANIC_END.match(line)
            else:
                os.write(target, line)


@contextmanager
def panic_reports_hidden() -> Iterator[None]:
    """While the block runs, stderr (the file descriptor, which the dataflow runtime writes to) goes through a filter
    that drops Rust panic reports: a step that raises makes bytewax panic, and the error the CLI then reports as one
    line would otherwise follow a panic message and, with RUST_BACKTRACE set, a backtrace."""
    sys.stderr.flush()
    original = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    forwarder = threading.Thread(target=_forward, args=(read_end, original), daemon=True)
    forwarder.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(original, 2)  # closes the pipe's last write end: the forwarder reads to its end and stops
        forwarder.join(timeout=5)
        os.close(original)


def die_with_parent() -> None:
    """Run in a child before it starts (`subprocess`'s preexec_fn): the kernel kills it when the process that started it
    dies, however that dies (Linux's PR_SET_PDEATHSIG), so a killed run leaves no worker behind writing its outputs."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
