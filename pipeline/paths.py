"""Where the bundled specs and the reference data sets are, relative to the project root."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SPECS_DIR = PROJECT_ROOT / "specs"
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
COMPAS_CSV = SHARED_DATA / "compas-scores-two-years.csv"
