"""The examples in the installed package's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import fairstream
import fairstream.connectors

MODULES = sorted(
    info.name
    for package in (fairstream, fairstream.connectors)  # connectors lives in a folder of its own
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    if not info.name.endswith("__main__")
)


@pytest.mark.parametrize("name", [name for name in MODULES if ">>>" in (importlib.import_module(name).__loader__.get_source(name) or "")])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
