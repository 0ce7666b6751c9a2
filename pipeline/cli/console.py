"""All terminal output goes through here: one console, tables, and one-line errors."""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TransferSpeedColumn
from rich.table import Table
from rich.text import Text

from fairstream.records.errors import FairstreamError

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)


def error(message: str) -> None:
    errors.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)


def warning(message: str) -> None:
    errors.print(f"[yellow]warning:[/] {escape(message)}", soft_wrap=True)


def stopped(signal_name: str | None, recovery: str | None, blocker: str | None = None) -> None:
    """The one line a run stopped by a signal ends with: how to go on from here, or why a resume cannot (`blocker`)."""
    resume = f"; {blocker}" if blocker else f"; run it again with --recovery {recovery} to go on from here" if recovery else ""
    errors.print(f"stopped on {signal_name}: every record read so far is processed and written{resume}", soft_wrap=True, markup=False)


class _WarningLines(logging.Handler):
    """Log records as one `warning:` line each on stderr, prefixed with `prefix` (e.g. the library they come from)."""

    def __init__(self, level: int, prefix: str = ""):
        super().__init__(level)
        self.prefix = prefix

    def emit(self, record: logging.LogRecord) -> None:
        warning(self.prefix + record.getMessage())


class _ErrorLines(_WarningLines):
    """Log records as one line each on stderr: `error:` from errors up, else `warning:`."""

    def emit(self, record: logging.LogRecord) -> None:
        (error if record.levelno >= logging.ERROR else warning)(record.getMessage())


def show_warnings(verbose: bool = False) -> None:
    """Route warnings of the `fairstream` loggers to stderr, and with `verbose` librdkafka's log lines too; called
    once by each command-line process."""
    _route(logging.getLogger("fairstream"), _WarningLines(logging.WARNING))
    if verbose:
        _route(logging.getLogger("librdkafka"), _WarningLines(logging.WARNING, "librdkafka: "))


def show_errors(name: str) -> None:
    """Route the errors of logger `name` (a service's, which goes on after them) to stderr as `error:` lines."""
    _route(logging.getLogger(name), _ErrorLines(logging.WARNING))


def _route(logger: logging.Logger, handler: _WarningLines) -> None:
    if not any(isinstance(existing, _WarningLines) for existing in logger.handlers):
        logger.addHandler(handler)
        logger.propagate = False


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, right: Iterable[int] = ()) -> None:
    """Print a table; `right` lists the columns to right-align (numbers). Cells are plain text: a part named
    `selection_rate[age=25 - 45]` is not markup."""
    view = Table(title=title, title_justify="left", show_edge=False, header_style="bold")
    aligned = set(right)
    for index, column in enumerate(columns):
        view.add_column(column, justify="right" if index in aligned else "left")
    for row in rows:
        view.add_row(*(Text(fmt(cell)) for cell in row))
    if console.is_terminal:
        console.print(view)  # fitted to the terminal
        return
    # piped to a file or a log: as wide as it needs, every cell whole, printed with the width it needs alone (setting
    # the shared console's width would fix it for every later line, whatever COLUMNS says then)
    needed = max(console.width, Measurement.get(console, console.options.update_width(100_000), view).maximum)
    Console(file=console.file, width=needed, highlight=False, no_color=console.no_color).print(view)


def fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def progress() -> Progress:
    """A progress bar for long replays and studies (transient: it disappears when done)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
        disable=not errors.is_terminal,  # a log gets the result lines, not a bar's leftovers
    )


def download_progress() -> Progress:
    """A progress bar for a download: bytes of the total, speed (transient)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=errors, transient=True, disable=not errors.is_terminal)


F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(command: F) -> F:
    """Turn a `FairstreamError` a command raises into one clear line and its exit code."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except FairstreamError as err:
            if str(err):  # empty: said already (a worker process that failed)
                error(str(err))
            sys.exit(err.exit_code)

    return wrapper  # type: ignore[return-value]
