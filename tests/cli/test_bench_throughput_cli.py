"""`fairstream bench throughput` on a small stream: exit code, the table's rows and the ratio line (timings vary, so they are not compared)."""

from __future__ import annotations

import re

from click.testing import CliRunner

from fairstream.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "160"}


def test_prints_the_three_flows_both_ratios_the_gap_check_and_the_monitor_output(tmp_path):
    kept = tmp_path / "stream.jsonl"
    result = CliRunner().invoke(cli, ["bench", "throughput", "--events", "5000", "--repeat", "2", "--keep", str(kept)], env=ENV)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()  # the transient progress bar leaves a blank line
    assert re.fullmatch(r"5,000 COMPAS-shaped events \(250 screenings a day\) on \d+ CPU cores; 2 round\(s\) of the three flows, each in a fresh process, timing run_main \(or the loop\) only", lines[0])
    assert re.fullmatch(r"trial folds: compiled; open trials: native table|trial folds: \w+; open trials: \w+( table)? \(installed without a C compiler\)", lines[1])
    rows = {cells[0]: cells for cells in ([c.strip() for c in line.split("│")] for line in lines if "│" in line)}
    assert set(rows) == {"passthrough", "monitor", "hand loop"}
    assert all(float(row[1]) > 0 and re.fullmatch(r"\d+ → \d+", row[4]) for row in rows.values())
    for line, name, target in ((lines[-6], "passthrough", "0\\.80"), (lines[-5], "hand-written loop", "1\\.00")):
        ratio = re.fullmatch(rf"monitor / {name}: (\d+\.\d\d) \(median of 2 rounds, (\d+\.\d\d)–(\d+\.\d\d); target ≥ {target}\)", line)
        assert ratio is not None and float(ratio[2]) <= float(ratio[1]) <= float(ratio[3]), line
    whole = re.fullmatch(
        r"whole processes, start to exit: fairstream run (\d+\.\d\d) s, hand loop (\d+\.\d\d) s: run (\d+\.\d\d)× as fast \(median of 2 rounds, (\d+\.\d\d)–(\d+\.\d\d); target ≥ 2\.00\)",
        lines[-4],
    )  # fmt: skip
    assert whole is not None and float(whole[1]) > 0 and float(whole[4]) <= float(whole[3]) <= float(whole[5]), lines[-4]
    assert re.fullmatch(r"hand loop's daily gaps equal the monitor's: yes \(largest difference \d\.\de[+-]\d\d over [\d,]+ days\)", lines[-3])
    assert re.fullmatch(r"monitor output: \d+ alert\(s\), \d+ estimate records, [\d,]+ trials closed", lines[-2])
    assert lines[-1] == f"kept the stream in {kept}"
    assert len(kept.read_bytes().splitlines()) == 5000


def test_rejects_zero_events():
    result = CliRunner().invoke(cli, ["bench", "throughput", "--events", "0"], env=ENV)
    assert result.exit_code == 2 and "--events" in result.output
