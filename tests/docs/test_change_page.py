"""The change-detection page runs as written: its spec sections are those the run uses, its example record is what
that run writes, and its measured table is what `fairstream bench changes` prints."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from tests.docs.markdown import ROOT, blocks
from tests.test_change_verdicts import SPEC, run, write

PAGE = (ROOT / "docs" / "changes.md").read_text()


def test_the_example_record_is_what_the_run_writes(tmp_path):
    shown = yaml.safe_load(blocks(PAGE, "yaml")[0])
    used = yaml.safe_load(SPEC)
    assert shown["metric"] == used["metric"] and shown["evaluate"] == used["evaluate"]
    assert {**shown["estimator"], "shift": used["estimator"].get("shift", used["metric"]["threshold"])} == {"shift": shown["estimator"]["shift"], **used["estimator"]}
    (change,) = [alert for alert in run(tmp_path, write(tmp_path / "s.jsonl", 1, change_at=5000)) if alert["type"] == "fairness.changed"]
    record = json.loads(blocks(PAGE, "json")[0])
    for key, value in record.items():
        written = change[key]
        if isinstance(value, float):
            assert round(written, 3) == value, key
        elif isinstance(value, list) and value and isinstance(value[0], float):
            assert [round(number, 3) for number in written] == value, key
        else:
            assert written == value, key


def bench(*options: str, cwd) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "bench", "changes", *options], capture_output=True, text=True, cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def rows(printed: str) -> list[str]:
    """The printed tables' body rows as the page's markdown rows."""
    return ["| " + " | ".join(cell.strip() for cell in line.split("│")) + " |" for line in printed.splitlines() if "│" in line]


def test_the_benchmark_prints_the_pages_measures(tmp_path):
    printed = bench("--runs", "10", "--still-runs", "10", "--coverage-runs", "10", "--run-length-streams", "1", "--figure", str(tmp_path / "changes.png"), cwd=tmp_path)
    for title in ("Streams that hold still, 10,000 decisions", "Gaps that move from 0 at decision 2,000", "Gaps that move from 0 at decision 20,000"):
        assert title in printed
    printed_rows = rows(printed)
    moved = [row.split(" | ")[:2] for row in printed_rows if re.match(r"\| 0\.\d+ \| 1:\d \|", row)]
    assert moved == 2 * [["| " + gap, split] for gap in ("0.05", "0.1", "0.2") for split in ("1:1", "1:9")]
    covered = [row.split(" | ")[:2] for row in printed_rows if row.startswith("| 0 → ")]
    assert covered == [["| 0 → " + gap, split] for gap in ("0.15", "0.3", "0.5") for split in ("1:1", "1:9")]
    assert re.search(r"^ 1:9\s+│\s+\d+ │\s+[\d,]+ │ \[[\d,]+, [\d,]+\]", printed, re.MULTILINE)
    assert (tmp_path / "changes.png").stat().st_size > 10_000


@pytest.mark.slow
def test_the_measured_tables_are_what_the_benchmark_prints(tmp_path):
    for row in rows(bench(cwd=tmp_path)):
        assert row in PAGE, row
