"""The change-detection page runs as written: its spec sections are those the run uses, its example record is what
that run writes, and its measured table is what `fairstream bench changes` prints."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.docs.markdown import ROOT, bench, blocks, table_rows
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


def test_the_benchmark_prints_the_pages_measures(tmp_path):
    printed = bench(
        "changes",
        "--runs", "10", "--still-runs", "10", "--calibration-streams", "200", "--coverage-runs", "10", "--run-length-streams", "1", "--patience-streams", "1", "--patience-trials", "5000",
        "--figure", str(tmp_path / "changes.png"), cwd=tmp_path,
    )  # fmt: skip
    for title in ("Streams that hold still, 10,000 decisions", "Gaps that move from 0 at decision 2,000", "Gaps that move from 0 at decision 20,000"):
        assert title in printed
    printed_rows = table_rows(printed)
    moved = [row.split(" | ")[:2] for row in printed_rows if re.match(r"\| 0\.\d+ \| 1:\d \|", row)]
    assert moved == 2 * [["| " + gap, split] for gap in ("0.05", "0.1", "0.2") for split in ("1:1", "1:9")]
    covered = [row.split(" | ")[:2] for row in printed_rows if row.startswith("| 0 → ")]
    assert covered == [["| 0 → " + gap, split] for gap in ("0.15", "0.3", "0.5") for split in ("1:1", "1:9")]
    assert re.search(r"^ 1:9\s+│\s+\d+ │\s+[\d,]+ │ \[[\d,]+, [\d,]+\]", printed, re.MULTILINE)
    assert any(row.startswith("| 15 | ") and row.endswith(" | 0.200 |") for row in printed_rows)  # every detector of six groups
    assert (tmp_path / "changes.png").stat().st_size > 10_000


@pytest.mark.slow
def test_the_measured_tables_are_what_the_benchmark_prints(tmp_path):
    for row in table_rows(bench("changes", cwd=tmp_path)):
        assert row in PAGE, row
