"""The command-line reference is generated from the commands (mkdocs-click): its directives, rendered as the site
build renders them, give a section to every command `fairstream` has, lab commands and subcommands included."""

from __future__ import annotations

import re

import click
from mkdocs_click._docs import make_command_docs
from mkdocs_click._loader import load_command

from fairstream.cli import cli
from tests.docs.markdown import ROOT

PAGE = (ROOT / "docs" / "cli.md").read_text()


def command_paths(command: click.Command, path: str) -> set[str]:
    """`path` and the path of every command below it, as `fairstream --help` and each group's `--help` list them."""
    found = {path}
    if isinstance(command, click.Group):
        context = click.Context(command, info_name=path)
        for name in command.list_commands(context):
            found |= command_paths(command.get_command(context, name), f"{path} {name}")
    return found


def rendered() -> list[str]:
    """The Markdown the page's mkdocs-click directives render to."""
    lines = []
    for module, name, prog in re.findall(r"::: mkdocs-click\n\s+:module: (\S+)\n\s+:command: (\S+)\n\s+:prog_name: ([^\n]+)\n", PAGE):
        lines += make_command_docs(prog_name=prog, command=load_command(module, name), depth=1, style="plain", has_attr_list=True)
    return lines


def documented() -> list[str]:
    """The headings of the rendered reference: one per command."""
    return [line.lstrip("#").split("{")[0].strip() for line in rendered() if line.startswith("#")]


def test_every_command_has_its_generated_section_once():
    headings = documented()
    assert sorted(headings) == sorted(set(headings))
    assert set(headings) == command_paths(cli, "fairstream") - {"fairstream"}


def test_the_reference_shows_no_value_of_the_machine_it_was_built_on():
    text = "\n".join(rendered())
    assert str(ROOT) not in text and "Sentinel" not in text


def test_the_site_renders_the_directives():
    assert "mkdocs-click" in (ROOT / "mkdocs.yml").read_text()
    assert "| command |" not in PAGE  # no hand-written synopsis table to drift
