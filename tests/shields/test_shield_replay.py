"""An auditor replays a shielded run from the raw decisions and the records `fairstream shield run` wrote alone: each
shielded decision's member, groups, seed and draw, with the shielded decisions before it, give its decision back — for
the synthesized shield and the adaptive one, with decisions arriving late. The draw is recomputed from the seed with
blake2b, the flip rule written out."""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.language.yaml_file import read_yaml
from fairstream.records.envelope import INTERVENTION
from fairstream.shields import MonotoneEnergy, Target
from fairstream.shields.energy.shields import ESTIMATE_STEP
from fairstream.shields.runtime.decisions import SHIELD_FIELD
from tests.conftest import SPECS


def replayed(record: dict, raw: bool, counts: dict[str, list[int]]) -> int:
    """The decision the record's facts give: the gap of the shielded decisions so far (an empty group's rate 0), the
    member's energy there, and the unfavoured raw decision flipped when the draw falls below it."""
    facts, group = record[SHIELD_FIELD], record["gender"]
    first, second = facts["groups"]
    member = facts["member"]
    energy = MonotoneEnergy(member["raw_gap"], Target(member["burn_in"], tuple(member["running"]), tuple(member["limit"])), member["alpha"], member["k"], domain=(-1.0, 1.0))
    rate = {name: (counts[name][1] / counts[name][0] if counts[name][0] else 0.0) for name in (first, second)}
    gap, pivot = rate[first] - rate[second], energy.pivot
    digest = hashlib.blake2b(f"{facts['seed']}\x1f{record['id']}".encode(), digest_size=8).digest()
    draw = (int.from_bytes(digest, "big") >> 11) / 2**53
    assert draw == facts["draw"]
    if gap == pivot:
        return int(raw)
    favoured = int((gap < pivot) == (group == first))  # below the pivot: accept in the first group, reject in the second
    return favoured if int(raw) != favoured and draw < energy(gap) else int(raw)


def shield_run(tmp_path, spec: dict, decisions: list[dict]) -> tuple[list[dict], list[dict]]:
    """`fairstream shield run` on the decisions as they arrive: the shielded decisions and the interventions it wrote."""
    (tmp_path / "shield.yaml").write_text(yaml.safe_dump(spec))
    write_jsonl(tmp_path / "decisions.jsonl", decisions)
    args = ["shield", "run", str(tmp_path / "shield.yaml"), "--input", str(tmp_path / "decisions.jsonl"), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli, args, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    read = lambda name: [json.loads(line) for line in (tmp_path / "out" / name).read_text().splitlines()]  # noqa: E731
    return read("decisions_shielded.jsonl"), [r for r in read("alerts.jsonl") if r["type"] == INTERVENTION]


@pytest.mark.parametrize("shield", ["synthesized", "adaptive"])
def test_every_decision_comes_back_from_the_raw_decisions_and_the_records(tmp_path, shield):
    spec = read_yaml(SPECS / "hiring_energy_shield.yaml")
    if shield == "adaptive":
        del spec["shield"]["rates"]
        spec["shield"] |= {"rates_within": [[0.5, 0.7], [0.2, 0.4]], "max_violation": 0.5, "horizon": 1000}
    events = hiring_decisions(2000, p_male=0.6, p_female=0.3, seed=9)
    arriving = [*events[:500], *events[520:700], *events[500:520], *events[700:]]  # twenty decisions come late
    raw = {event["id"]: event["hired"] for event in events}
    shielded, interventions = shield_run(tmp_path, spec, arriving)
    counts = {group: [0, 0] for group in spec["shield"]["groups"]}
    flips = 0
    for record in shielded:
        facts = record[SHIELD_FIELD]
        assert facts["spec_sha256"] == hashlib.sha256((tmp_path / "shield.yaml").read_bytes()).hexdigest()
        assert ("rates" in facts) == (shield == "adaptive")
        if shield == "adaptive":  # the member is the one for the estimates before this decision, to the estimate's step
            first, second = facts["groups"]
            estimate = facts["rates"][first] - facts["rates"][second]
            assert facts["member"]["raw_gap"] == pytest.approx(min(1.0, max(-1.0, round(estimate / ESTIMATE_STEP) * ESTIMATE_STEP)), abs=1e-12)
        decided = replayed(record, raw[record["id"]], counts)
        assert decided == int(record["hired"]) and facts["flipped"] == (decided != int(raw[record["id"]]))
        counts[record["gender"]][0] += 1
        counts[record["gender"]][1] += decided
        flips += facts["flipped"]
    assert len(shielded) == 2000 and sum(1 for r in shielded if r[SHIELD_FIELD].get("late")) == 20 and flips > 50
    by_decision = {r["decision_id"]: r for r in interventions}
    assert set(by_decision) == {r["id"] for r in shielded if r[SHIELD_FIELD]["flipped"]}
    for record in shielded:
        if record[SHIELD_FIELD]["flipped"]:
            facts = {key: value for key, value in record[SHIELD_FIELD].items() if key != "flipped"}
            assert {key: by_decision[record["id"]][key] for key in facts} == facts


def test_the_shield_command_states_its_member_first_and_keeps_brackets_as_written(tmp_path):
    """A shield told the raw gap alone names in its first line what to give for a bound, `[p_a, p_b]` (once swallowed
    as markup)."""
    spec = read_yaml(SPECS / "hiring_energy_shield.yaml")
    del spec["shield"]["rates"]
    spec["shield"] |= {"raw_gap": 0.3, "steepness": 0.5}
    (tmp_path / "shield.yaml").write_text(yaml.safe_dump(spec))
    write_jsonl(tmp_path / "decisions.jsonl", hiring_decisions(50, p_male=0.6, p_female=0.3, seed=1))
    args = ["shield", "run", str(tmp_path / "shield.yaml"), "--input", str(tmp_path / "decisions.jsonl"), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli, args, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith("energy shield: member α = 0.5000 (set by hand for the raw gap)")
    assert "(give rates: [p_a, p_b] for one)" in result.output.splitlines()[0]
