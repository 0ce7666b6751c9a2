"""Write a bias audit: the HTML page, and beside it every table as CSV and JSON (`<report>_tables/`)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import orjson

from fairstream.audit.figures import timeline_png
from fairstream.audit.html import render
from fairstream.audit.report import RunAudit

COLUMNS = ["monitor", "part", "level", "category", "n", "selected", "rate", "share", "impact_ratio", "p_value", "note"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def write_report(run: RunAudit, out: Path) -> list[Path]:
    """Write the page to `out` and the tables beside it; return every file written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(run, {audit.monitor: timeline_png(audit) for audit in run.monitors}), encoding="utf-8")
    folder = out.with_name(f"{out.stem}_tables")
    folder.mkdir(exist_ok=True)
    written = [out]
    for audit in run.monitors:
        for table in audit.tables:
            stem = folder / f"{_slug(audit.monitor)}__{_slug(table.part)}__{_slug(table.level)}"
            rows = table.as_rows()
            with stem.with_suffix(".csv").open("w", newline="", encoding="utf-8") as handle:
                writer = csv.DictWriter(handle, COLUMNS)
                writer.writeheader()
                writer.writerows(rows)
            meta = {"status": table.status, "e_value": table.e_value, "rate": table.rate_name, "notes": table.notes,
                    "spec_sha256": audit.spec_sha256, "produced_by": audit.produced_by}  # fmt: skip
            stem.with_suffix(".json").write_bytes(orjson.dumps({**meta, "rows": rows}, option=orjson.OPT_INDENT_2))
            written += [stem.with_suffix(".csv"), stem.with_suffix(".json")]
    for stale in sorted(folder.glob("*__*__*")):  # a table an earlier report wrote and this one does not
        if stale.suffix in (".csv", ".json") and stale not in written:
            stale.unlink()
    return written
