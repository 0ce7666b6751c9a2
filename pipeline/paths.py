"""Where the bundled specs (package data) and the reference data sets (`../shared/data`) are."""

from importlib.resources import files
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
"""The clone's root for an editable install; the install's site-packages otherwise."""
SPECS_DIR = Path(str(files("fairstream.specs")))
DOCS_URL = "https://fairstream.readthedocs.io/en/latest/"
"""The documentation site (mkdocs.yml's site_url)."""
RUNBOOK_URL = f"{DOCS_URL}runbook.html"
"""The runbook alerts point to by default (`--runbook-url` or FAIRSTREAM_RUNBOOK_URL for a copy of your own)."""


def _shared_data() -> Path:
    """`../shared/data` beside the working directory or beside the clone, whichever holds the data sets."""
    candidates = [Path.cwd().parent / "shared" / "data", PROJECT_ROOT.parent / "shared" / "data"]
    return next((candidate for candidate in candidates if candidate.is_dir()), candidates[-1])


SHARED_DATA = _shared_data()
COMPAS_CSV = SHARED_DATA / "compas-scores-two-years.csv"
