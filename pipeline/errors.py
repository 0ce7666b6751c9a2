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


class ConnectorError(FairstreamError):
    """A connector (Kafka, broker process, file sink) failed."""
