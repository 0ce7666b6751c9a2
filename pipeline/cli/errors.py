"""Turn a `FairstreamError` into one clear line and its exit code."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from fairstream.cli import console
from fairstream.records.errors import FairstreamError

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(command: F) -> F:
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except FairstreamError as err:
            console.error(str(err))
            sys.exit(err.exit_code)

    return wrapper  # type: ignore[return-value]
