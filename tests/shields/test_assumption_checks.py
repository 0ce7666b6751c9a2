"""Shields check their synthesis assumptions as they run: labels later than label_delay, and raw rates outside
rates_within, are said once in a warning line, in every status record after and in a Prometheus counter; streams that
keep to them say nothing."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from fairstream import metrics
from fairstream.cli import cli
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.language.yaml_file import read_yaml
from tests.conftest import SPECS
from tests.streams import labelled_decisions

DECISIONS = 1200


def shield_run(tmp_path, spec: dict, events: list[dict]):
    (tmp_path / "shield.yaml").write_text(yaml.safe_dump(spec))
    write_jsonl(tmp_path / "events.jsonl", events)
    args = ["shield", "run", str(tmp_path / "shield.yaml"), "--input", str(tmp_path / "events.jsonl"), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli, args, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    statuses = [json.loads(line) for line in (tmp_path / "out" / "estimates.jsonl").read_text().splitlines()]
    return result, [status for status in statuses if status["type"] == "shield.status"]


def breaks(monitor: str, assumption: str) -> float:
    return metrics.REGISTRY.get_sample_value("fairstream_shield_assumption_breaks_total", {"monitor": monitor, "assumption": assumption}) or 0.0


@pytest.mark.parametrize("delay", [5, 30])
def test_labels_later_than_label_delay_are_said(tmp_path, delay):
    spec = read_yaml(SPECS / "hiring_equal_opportunity_shield.yaml")
    spec["shield"] |= {"label_delay": 10, "max_violation": 0.3, "status_every": 100}
    before = breaks(spec["monitor"], "label_delay")
    result, statuses = shield_run(tmp_path, spec, labelled_decisions(DECISIONS, (0.5, 0.5), (0.8, 0.5), (0.2, 0.1), seed=3, delay=delay))
    last = statuses[-1]
    # the label of decision i (from 0) comes right after decision i + delay; the last status, written at the last
    # decision (index n − 1), has counted the labels that came after decisions 0 … n − 2: delay decisions late each
    assert last["decisions"] == DECISIONS
    late = sum(index + delay <= DECISIONS - 2 for index in range(DECISIONS)) if delay > 10 else 0
    report = last["assumptions"]["label_delay"]
    warned = [line for line in result.stderr.splitlines() if "later than label_delay = 10" in line]
    if delay <= 10:
        assert report == {"held": True, "allowed": 10, "late_labels": 0, "largest_delay": delay} and warned == []
        assert breaks(spec["monitor"], "label_delay") == before
    else:
        assert not report["held"] and report["late_labels"] == late > 0 and report["largest_delay"] == delay
        assert len(warned) == 1 and warned[0].startswith("warning: shield hiring-equal-opportunity-shield: a label arrived 30 decisions")
        assert breaks(spec["monitor"], "label_delay") - before == late


@pytest.mark.parametrize(("rates", "held"), [((0.6, 0.3), True), ((0.95, 0.1), False)])
def test_rates_outside_rates_within_are_said(tmp_path, rates, held):
    spec = read_yaml(SPECS / "hiring_energy_shield.yaml")
    del spec["shield"]["rates"]
    spec["shield"] |= {"rates_within": [[0.5, 0.7], [0.2, 0.4]], "max_violation": 0.5, "horizon": 1000}
    before = breaks(spec["monitor"], "rates_within")
    result, statuses = shield_run(tmp_path, spec, hiring_decisions(DECISIONS, p_male=rates[0], p_female=rates[1], seed=4))
    report = statuses[-1]["assumptions"]["rates_within"]
    warned = [line for line in result.stderr.splitlines() if "outside rates_within" in line]
    assert report["held"] is held and len(warned) == (0 if held else 1)
    assert breaks(spec["monitor"], "rates_within") - before == report["decisions_outside"]
    if not held:
        assert report["decisions_outside"] > DECISIONS // 2 and set(report["outside"]) <= {"male", "female"} and report["outside"]
        assert "beyond its error: the stated bound was simulated for decision makers inside those ranges" in warned[0]
