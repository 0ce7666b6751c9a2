"""A directory belongs to one run: a recovery store or an output directory is held by the run that uses it, and a
second run on it is refused while the holder's process lives."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fairstream.records.errors import ConnectorError, UsageError

LOCK = ".fairstream.lock"
"""The file a run holds locked, naming its process, while it uses the directory."""


@contextmanager
def holding(directory: Path, what: str, option: str) -> Iterator[int]:
    """Hold `directory` (a `what`, given by `option`) for one run; a second run on it is refused (one line, exit 2).
    The lock is the kernel's (flock), so it is released when the process ends however it ends, SIGKILL included; the
    block gets the lock's file descriptor, for worker processes to hold it with the run (see `subprocess`'s pass_fds)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle = (directory / LOCK).open("a+")
    except OSError as err:
        raise ConnectorError(f"cannot write to the {what} {directory}: {err.strerror}") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip()
            raise UsageError(
                f"{what} {directory} is in use by another run{f' (process {holder})' if holder.isdigit() else ''}: "
                f"it belongs to one run; wait for that one to end, or give this run another {option}"
            ) from None
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
        except OSError:
            pass  # the lock holds without the process named (a full disk)
        yield handle.fileno()
    finally:
        handle.close()
