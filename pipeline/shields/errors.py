"""The error shields raise: a `FairstreamError`, so the CLI shows it as one line."""

from fairstream.records.errors import FairstreamError


class ShieldError(FairstreamError):
    """A shield, energy function or synthesis problem is ill-posed, or no shield meets the requested bound."""
