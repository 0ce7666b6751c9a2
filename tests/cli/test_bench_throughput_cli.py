"""`fairstream bench throughput` on a small stream: exit code, the table's rows and the ratio line (timings vary, so they are not compared)."""

from __future__ import annotations

import re

from click.testing import CliRunner

from fairstream.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "160"}


def test_prints_both_flows_the_ratio_and_the_monitor_output(tmp_path):
    kept = tmp_path / "stream.jsonl"
    result = CliRunner().invoke(cli, ["bench", "throughput", "--events", "5000", "--repeat", "2", "--keep", str(kept)], env=ENV)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()  # the transient progress bar leaves a blank line
    assert re.fullmatch(r"5,000 COMPAS-shaped events \(250 screenings a day\) on \d+ CPU cores; 2 round\(s\) of both flows back to back, each flow in a fresh process, timing run_main only", lines[0])
    assert re.fullmatch(r"trial folds: compiled; open trials: native table|trial folds: \w+; open trials: \w+( table)? \(installed without a C compiler\)", lines[1])
    rows = {cells[0]: cells for cells in ([c.strip() for c in line.split("│")] for line in lines if "│" in line)}
    assert set(rows) == {"passthrough", "monitor"}
    assert all(float(row[1]) > 0 and re.fullmatch(r"\d+ → \d+", row[4]) for row in rows.values())
    ratio = re.fullmatch(r"monitor / passthrough: (\d+\.\d\d) \(median of 2 rounds, (\d+\.\d\d)–(\d+\.\d\d); target ≥ 0\.50\)", lines[-3])
    assert ratio is not None and float(ratio[2]) <= float(ratio[1]) <= float(ratio[3])
    assert re.fullmatch(r"monitor output: \d+ alert\(s\), \d+ estimate records, [\d,]+ trials closed", lines[-2])
    assert lines[-1] == f"kept the stream in {kept}"
    assert len(kept.read_bytes().splitlines()) == 5000


def test_rejects_zero_events():
    result = CliRunner().invoke(cli, ["bench", "throughput", "--events", "0"], env=ENV)
    assert result.exit_code == 2 and "--events" in result.output
