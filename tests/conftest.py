"""Shared fixtures: paths to the reference data sets beside the project and to the bundled specs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
SPECS = ROOT / "specs"


@pytest.fixture(scope="session")
def compas_csv() -> Path:
    path = SHARED_DATA / "compas-scores-two-years.csv"
    assert path.is_file(), f"the COMPAS file is expected at {path} (../shared/data beside the project)"
    return path


@pytest.fixture(scope="session")
def specs_dir() -> Path:
    return SPECS
