"""One error tree for fairstream: the CLI turns any `FairstreamError` into one line and an exit code."""


class FairstreamError(Exception):
    """Base of every error fairstream raises on purpose."""

    exit_code = 1


class SpecError(FairstreamError):
    """A monitor spec is invalid; `issues` lists every problem found as (path, message)."""

    exit_code = 2

    def __init__(self, source: str, issues: list[tuple[str, str]]):
        self.source = source
        self.issues = issues
        lines = [f"{source}: {path}: {message}" if path else f"{source}: {message}" for path, message in issues]
        super().__init__("\n".join(lines))


class ExpressionError(FairstreamError):
    """An expression in a spec cannot be parsed or type-checked."""

    exit_code = 2


class InsufficientData(FairstreamError):
    """An estimate is undefined: no observations and no prior to fall back on."""


class InputError(FairstreamError):
    """An input file or stream cannot be opened or has an unusable shape."""


class UsageError(FairstreamError):
    """Options, settings files or environment variables that cannot be used (together, or at all)."""

    exit_code = 2


class ConnectorError(FairstreamError):
    """A connector (Kafka, broker process, file sink) failed."""


class UndeliveredError(ConnectorError):
    """A run stopped (SIGINT, SIGTERM) while output records still waited for the broker's acknowledgement."""

    exit_code = 3

    def __init__(self, waiting: int, bootstrap: str):
        super().__init__(
            f"stopped with {waiting:,} output record(s) not acknowledged by Kafka at {bootstrap}; "
            "a run resumed from the same --recovery store writes them again"
        )


class EvaluationError(FairstreamError):
    """The monitor refuses work it cannot do in bounded memory (a jump of event time over too many evaluations)."""


def raised_in_dataflow(error: BaseException) -> FairstreamError | None:
    """The `FairstreamError` a dataflow step raised, found inside the runtime errors bytewax wraps it in (None if there is none)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, FairstreamError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
