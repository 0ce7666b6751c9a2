"""`fairstream bench scale` on a small stream: every process count reads the same keyed input and writes what one
process writes, on files and on a Kafka topic (speeds vary, so they are not compared)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from fairstream.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


def rows(output: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split("│")] for line in output.splitlines() if "│" in line]


def test_files_on_one_and_two_processes():
    result = CliRunner().invoke(cli, ["bench", "scale", "--events", "20000", "--partitions", "2", "--processes", "2", "--no-kafka"], env=ENV)
    assert result.exit_code == 0, result.output
    table = rows(result.output)
    assert [(row[0], row[1]) for row in table] == [("files", "1"), ("files", "2")]
    assert all(row[6] == "yes" and float(row[2]) > 0 for row in table) and table[0][4] == "1.00"
    assert re.fullmatch(r"speedup at 2 processes: \d+\.\d\d \(files\)", result.output.strip().splitlines()[-1])


@pytest.mark.kafka
def test_kafka_runs_write_what_the_file_run_writes(kafka_bootstrap):
    result = CliRunner().invoke(cli, ["bench", "scale", "--events", "20000", "--partitions", "2", "--processes", "2", "--bootstrap", kafka_bootstrap], env=ENV)
    assert result.exit_code == 0, result.output
    table = rows(result.output)
    assert [(row[0], row[1]) for row in table] == [("files", "1"), ("files", "2"), ("kafka", "1"), ("kafka", "2")]
    assert all(row[6] == "yes" for row in table)
    assert re.fullmatch(r"speedup at 2 processes: \d+\.\d\d \(files\), \d+\.\d\d \(kafka\)", result.output.strip().splitlines()[-1])


def test_rejects_a_process_count_that_is_no_number():
    result = CliRunner().invoke(cli, ["bench", "scale", "--processes", "1,two"], env=ENV)
    assert result.exit_code == 2 and "--processes" in result.output
