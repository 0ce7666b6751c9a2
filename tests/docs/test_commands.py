"""Every `fairstream` command the README and the docs show names commands and options that exist, and every command
line of their shell blocks parses as the CLI reads it: the documentation cannot name a flag that is gone."""

from __future__ import annotations

import re
import shlex

import click
import pytest

from fairstream.cli import cli
from tests.docs.markdown import command_lines, command_mentions

LINES = command_lines()
MENTIONS = command_mentions()


def options(command: click.Command) -> set[str]:
    return {"--help", "-h", *(name for param in command.params for name in [*param.opts, *param.secondary_opts])}


def unknown_options(text: str) -> list[str]:
    """The options in a synopsis (`fairstream run SPEC… [--out DIR]`) that the command they follow does not take."""
    command, context, unknown = cli, click.Context(cli, info_name="fairstream"), []
    for token in text.replace("[", " ").replace("]", " ").replace("(", " ").replace(")", " ").split()[1:]:
        if re.match(r"--?[a-zA-Z]", token):
            if token.split("=")[0] not in options(command):
                unknown.append(f"{context.command_path} {token}")
        elif isinstance(command, click.Group) and command.get_command(context, token) is not None:
            command = command.get_command(context, token)
            context = click.Context(command, info_name=token, parent=context)
    return unknown


def parse(line: str) -> None:
    """Parse a command line as `fairstream` would, down to its command, without running it."""
    context = cli.make_context("fairstream", shlex.split(line)[1:])
    while isinstance(context.command, click.Group):
        name, command, rest = context.command.resolve_command(context, context._protected_args + context.args)
        context = command.make_context(name, rest, parent=context)


def test_the_docs_show_commands():
    assert len(LINES) >= 10 and len(MENTIONS) >= 40
    assert {line.split()[1] for _, line in LINES + MENTIONS} >= {"run", "demo", "replay", "alerts", "bench", "shield", "spec"}


@pytest.mark.parametrize(("page", "text"), MENTIONS + LINES)
def test_every_documented_option_exists(page, text):
    assert unknown_options(text) == [], f"{page}: {text}"


@pytest.mark.parametrize(("page", "line"), LINES)
def test_every_documented_command_line_parses(page, line):
    try:
        parse(line)
    except click.BadParameter as err:  # a path the example makes or brings is not here; anything else is a doc error
        assert not isinstance(err, click.MissingParameter) and "does not exist" in err.format_message(), f"{page}: {line}: {err}"
    except click.UsageError as err:
        pytest.fail(f"{page}: {line}: {err.format_message()}")


def test_an_unknown_option_or_command_is_found():
    assert unknown_options("fairstream run SPEC [--no-such-flag]") == ["fairstream run --no-such-flag"]
    with pytest.raises(click.UsageError):
        parse("fairstream bench no-such-benchmark")
    with pytest.raises(click.UsageError):
        parse("fairstream run compas_equalized_odds --no-such-flag 1")
