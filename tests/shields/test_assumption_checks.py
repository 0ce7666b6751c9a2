"""Shields check their synthesis assumptions as they run: overdue labels, raw rates and shares away from those the
bound assumed, and groups it was not declared for are said once in a warning line, in every status record after and
in a Prometheus counter; streams that keep to them say nothing."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from fairstream import metrics
from fairstream.cli import cli
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import HiringMaker, drifting_hiring_decisions, hiring_decisions
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


def warnings(result, text: str) -> list[str]:
    return [line for line in result.stderr.splitlines() if text in line]


@pytest.mark.parametrize("delay", [5, 30, None])
def test_labels_are_counted_when_they_become_overdue(tmp_path, delay):
    spec = read_yaml(SPECS / "hiring_equal_opportunity_shield.yaml")
    spec["shield"] |= {"label_delay": 10, "max_violation": 0.3, "status_every": 100}
    before = breaks(spec["monitor"], "label_delay")
    events = labelled_decisions(DECISIONS, (0.5, 0.5), (0.8, 0.5), (0.2, 0.1), seed=3, delay=delay or 0)
    women = {event["id"] for event in events if event.get("gender") == "female"}
    if delay is None:  # the women's labels never come
        events = [event for event in events if not (event["event"] == "LABEL" and event["id"] in women)]
    result, statuses = shield_run(tmp_path, spec, events)
    last = statuses[-1]
    assert last["decisions"] == DECISIONS
    # decision n (from 1) is overdue once decision n + 11 is made without its label: with labels 30 decisions late
    # that is every decision up to n = 1189 by the last status; with the women's never coming, each of theirs up to it
    ids = [int(event["id"]) for event in events if event["event"] == "DECISION"]
    late_ones = [] if delay == 5 else ids if delay == 30 else [n for n in ids if str(n) in women]
    overdue = sum(n + 11 <= DECISIONS for n in late_ones)
    report = last["assumptions"]["label_delay"]
    warned = warnings(result, "is overdue")
    assert report["breaks"] == overdue and report["held"] is (overdue == 0)
    assert breaks(spec["monitor"], "label_delay") - before == overdue
    assert len(warned) == (overdue > 0)
    if delay == 30:  # counted when it became overdue: the first status (decision 100) has 89 already, none arrived yet
        assert statuses[0]["assumptions"]["label_delay"]["breaks"] == 89 and statuses[0]["assumptions"]["label_delay"]["late_labels"] == 69
        assert warned[0].startswith("warning: shield hiring-equal-opportunity-shield: the label of decision 1 is overdue: 11 decisions")


def fixed_shield(**shield) -> dict:
    spec = read_yaml(SPECS / "hiring_energy_shield.yaml")
    spec["shield"] |= {"max_violation": 0.5, "horizon": 1000, "status_every": 100, **shield}
    return spec


@pytest.mark.parametrize(
    ("end", "broken"),
    [
        (HiringMaker(0.6, 0.3, 0.5), set()),
        (HiringMaker(0.8, 0.1, 0.5), {"rates"}),
        (HiringMaker(0.6, 0.3, 0.1), {"share"}),
    ],
)
def test_rates_and_share_are_checked_against_the_synthesis(tmp_path, end, broken):
    spec = fixed_shield()
    events = drifting_hiring_decisions(2000, HiringMaker(0.6, 0.3, 0.5), end, seed=8, drift_from=500)
    before = {name: breaks(spec["monitor"], name) for name in ("rates", "share")}
    result, statuses = shield_run(tmp_path, spec, events)
    report = statuses[-1]["assumptions"]
    assert {name for name in ("rates", "share", "groups") if not report[name]["held"]} == broken
    assert report["rates"]["allowed"] == {"male": [0.6, 0.6], "female": [0.3, 0.3]} and report["share"]["allowed"] == {"male": [0.5, 0.5]}
    for name in ("rates", "share"):
        assert breaks(spec["monitor"], name) - before[name] == report[name]["breaks"] == len(report[name]["outside"])
        assert len(warnings(result, "false-warning level")) == len(broken)
        for found in report[name]["outside"].values():  # found after the drift began, from the group's own decisions
            assert found["after"] > 100
    summary = warnings(result, "assumptions broken")
    assert summary == ([f"warning: shield hiring-energy-shield: assumptions broken: {name} ({len(report[name]['outside'])} groups outside); its stated bound does not cover this stream (docs: shields, assumptions)" for name in broken])
    if "rates" in broken:  # the men's rate went up and the women's down, by 0.2 each: both found
        assert set(report["rates"]["outside"]) == {"male", "female"} and report["rates"]["means"]["male"] > 0.62
        assert "raw acceptance rate left 0." in result.stderr
    if "share" in broken:
        assert report["share"]["means"]["male"] < 0.45 and "group male's share of the decisions left 0.5" in result.stderr


@pytest.mark.parametrize(("rates", "held"), [((0.6, 0.3), True), ((0.95, 0.1), False)])
def test_rates_outside_rates_within_are_said(tmp_path, rates, held):
    spec = fixed_shield(rates_within=[[0.5, 0.7], [0.2, 0.4]])
    del spec["shield"]["rates"]
    before = breaks(spec["monitor"], "rates_within")
    result, statuses = shield_run(tmp_path, spec, hiring_decisions(DECISIONS, p_male=rates[0], p_female=rates[1], seed=4))
    report = statuses[-1]["assumptions"]["rates_within"]
    assert report["held"] is held and len(warnings(result, "raw acceptance rate left within")) == (0 if held else 1)
    assert breaks(spec["monitor"], "rates_within") - before == report["breaks"]
    if not held:  # 0.95 against at most 0.7: found within a hundred of the men's decisions; 0.1 against at least 0.2 later
        assert set(report["outside"]) == {"male", "female"} and report["outside"]["male"]["after"] < 100


def test_a_group_the_shield_was_not_declared_for_passes_with_its_reason(tmp_path):
    spec = fixed_shield()
    events = hiring_decisions(600, p_male=0.6, p_female=0.3, seed=5)
    for event in events[::50]:
        event["gender"] = "nonbinary"
    before = breaks(spec["monitor"], "groups")
    result, statuses = shield_run(tmp_path, spec, events)
    shielded = [json.loads(line) for line in (tmp_path / "out" / "decisions_shielded.jsonl").read_text().splitlines()]
    passed = [record for record in shielded if record["gender"] == "nonbinary"]
    assert len(passed) == 12 and all(record["fairstream_shield"]["passed"] == "undeclared_group" for record in passed)
    assert all("passed" not in record["fairstream_shield"] for record in shielded if record["gender"] != "nonbinary")
    report = statuses[-1]["assumptions"]["groups"]  # the closing status, after the last decision
    assert statuses[-1]["decisions"] == 588 and [status["decisions"] for status in statuses[:-1]] == [100, 200, 300, 400, 500]
    assert report == {"held": False, "allowed": ["male", "female"], "breaks": 12, "undeclared": {"nonbinary": 12}}
    assert breaks(spec["monitor"], "groups") - before == 12
    assert len(warnings(result, "group 'nonbinary', which the shield was not declared for")) == 1
