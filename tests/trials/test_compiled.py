"""Where a C compiler is found, the install compiles the trials' hot paths from their current sources (`setup.py`)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import shutil
import sysconfig
from pathlib import Path

import pytest

from fairstream.paths import PROJECT_ROOT

HOT_PATHS = {"fairstream.trials.folds": "folds.py", "fairstream.trials.table": "table.pyx"}


@pytest.mark.parametrize(("module", "source"), HOT_PATHS.items(), ids=HOT_PATHS.values())
def test_hot_paths_are_compiled_from_their_current_source_where_a_compiler_is(module, source):
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}): the monitor runs without the compiled modules")
    found = importlib.util.find_spec(module)
    built = Path(found.origin) if found is not None and found.origin else None
    source_path = PROJECT_ROOT / "pipeline" / "trials" / source
    assert built is not None and built.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), (
        f"pipeline/trials/{source} was not compiled at install: `pip install -e .` builds it"
    )
    assert built.stat().st_mtime >= source_path.stat().st_mtime, f"pipeline/trials/{source} changed since it was compiled: `pip install -e .` rebuilds it"
