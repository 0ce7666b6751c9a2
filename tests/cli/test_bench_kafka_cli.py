"""`fairstream bench kafka` on a small stream against the test broker: every flow reads the whole topic and every
figure is printed (speeds vary, so they are not compared); the rate past start-up by its closed form."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.engine.api import INSTALLED
from fairstream.lab.bench.kafka import FlowRate, rate_past_startup

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


def test_the_rate_past_startup_leaves_out_what_both_runs_pay():
    # 1.5 s of start-up in both: 300 events in 2.5 s and 600 in 3.5 s are 300 events/s once running
    assert rate_past_startup(FlowRate("monitor", 300, 2.5), FlowRate("monitor", 600, 3.5)) == pytest.approx(300.0)
    assert math.isnan(rate_past_startup(FlowRate("monitor", 300, 2.5), FlowRate("monitor", 600, 2.5)))


@pytest.mark.kafka
def test_prints_every_figure(kafka_bootstrap):
    args = ["bench", "kafka", "--events", "3000", "--flow-events", "3000", "--rate", "200", "--seconds", "1", "--bootstrap", kafka_bootstrap]
    result = CliRunner().invoke(cli, args, env=ENV)
    assert result.exit_code == 0, result.output
    figures = {cells[0]: cells[1] for cells in ([cell.strip() for cell in line.split("│")] for line in result.output.splitlines() if "│" in line)}
    for measure in (
        "monitor (consume, parse, trials, verdicts, alerts), 3,000 events",
        "plain confluent-kafka consumer (consume, JSON-decode), 3,000 events",
        "monitor past start-up (from 3,000 and 6,000 events)",
        "plain consumer past start-up",
        "monitor / plain consumer past start-up (target ≥ 0.50)",
        *(f"verdicts measured, {engine} engine" for engine in INSTALLED),
    ):
        assert measure in figures, result.output
    assert float(figures["monitor / plain consumer (target ≥ 0.80)"]) > 0
    assert not any(value.strip().lower() == "nan" or "nan " in value for value in figures.values()), figures  # a figure or why it is missing


def test_a_figure_that_could_not_be_measured_says_why():
    from fairstream.lab.cli.bench.kafka import STARTUP, _measured

    assert _measured(math.nan, "{:.2f}", STARTUP) == STARTUP and _measured(0.5, "{:.2f}", STARTUP) == "0.50"
