"""Command groups whose commands are imported only when they run: `--help` stays instant, and a command whose
optional dependencies are missing says which extra to install instead of failing at start-up."""

from __future__ import annotations

import importlib
import sys

import click

from fairstream.cli import console

EXTRAS = {"pandas": "lab", "sklearn": "lab", "duckdb": "lab", "torch": "classifiers"}
"""Optional top-level modules → the extra of the `fairstream` distribution that installs them."""


class LazyGroup(click.Group):
    """A group of eagerly registered commands plus `lazy` ones: name → ("module:attribute", the one-line help)."""

    def __init__(self, *args, lazy: dict[str, tuple[str, str]] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.commands, *self.lazy]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands or name not in self.lazy:
            return self.commands.get(name)
        module, attribute = self.lazy[name][0].split(":")
        try:
            return getattr(importlib.import_module(module), attribute)
        except ModuleNotFoundError as err:
            missing = (err.name or "").partition(".")[0]
            if missing not in EXTRAS:
                raise
            console.error(f"{ctx.command_path} {name} needs {missing}: pip install 'fairstream[{EXTRAS[missing]}]'")
            sys.exit(1)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, command.get_short_help_str(limit=80)) for name, command in self.commands.items() if not command.hidden]
        rows += [(name, short) for name, (_, short) in self.lazy.items()]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
