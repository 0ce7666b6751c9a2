"""An auditor written from the Shields page's "Deciding a decision again" alone (no fairstream shield code): from the
raw decisions, the labels and the shielded records, it decides every decision of four `fairstream shield run`
outputs again — the synthesized two-group shield with decisions arriving late and with uneven groups (its flips placed
in the smaller group first), the adaptive one, equal opportunity with labels five decisions later, and three groups —
and gets each one back."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

import pytest
import yaml
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.language.yaml_file import read_yaml
from tests.conftest import SPECS
from tests.streams import group_decisions, labelled_decisions

FACTS = "fairstream_shield"


def draw(seed: int, decision_id: str) -> float:
    digest = hashlib.blake2b(f"{seed}\x1f{decision_id}".encode(), digest_size=8).digest()
    return (int.from_bytes(digest[:8], "big") >> 11) / 2**53


def ramp(d: float, w: float, k: int) -> float:
    return 0.0 if d < 0 else min(1.0, (d / (w or 1.0)) ** k)


def two_group_energy(member: dict, x: float) -> tuple[float, float]:
    """The page's table: (ζ(x), the pivot c)."""
    alpha, p, k = member["alpha"], member["raw_gap"], member["k"]
    (s_lo, s_hi), (l_lo, l_hi) = member["running"], member["limit"]
    if p < l_lo:
        x_l, c = l_lo, s_hi
        v = (x_l - p) / (1 - p)
        if x <= x_l:
            return v + alpha * (1 - v) * ramp(x_l - x, x_l - s_lo, k), c
        return (v * ((c - x) / (c - x_l)) ** k if x <= c else alpha * ramp(x - c, 1 - c, k)), c
    if p > l_hi:
        x_l, c = l_hi, s_lo
        v = (p - x_l) / (p + 1)
        if x >= x_l:
            return v + alpha * (1 - v) * ramp(x - x_l, s_hi - x_l, k), c
        return (v * ((x - c) / (x_l - c)) ** k if x >= c else alpha * ramp(c - x, c + 1, k)), c
    c = p
    return (alpha * ramp(c - x, c - s_lo, k) if x < c else alpha * ramp(x - c, s_hi - c, k)), c


def placed(zeta: float, below: bool, group: str, groups: list[str], placement: dict | None) -> float:
    """The page's rule 5: the flip probability of `group`'s unfavoured decisions."""
    if placement is None:
        return zeta
    p1, p2 = (placement["rates"][name] for name in groups)
    unfavoured = {groups[0]: 1 - p1 if below else p1, groups[1]: p2 if below else 1 - p2}
    small_group = placement["smaller"]
    large_group = groups[1] if small_group == groups[0] else groups[0]
    small, large = unfavoured[small_group], unfavoured[large_group]
    push = zeta * (small + large)
    q_small = min(1.0, push / small) if small > 0 else 0.0
    if group == small_group:
        return q_small
    return min(1.0, (push - small) / large) if push - small > 0 and large > 0 else 0.0


def decide_two(raw: int, group: str, facts: dict, groups: list[str], counts: dict[str, list[int]], u: float) -> int:
    rate = {name: counts[name][1] / counts[name][0] if counts[name][0] else 0.0 for name in groups}
    gap = rate[groups[0]] - rate[groups[1]]
    zeta, c = two_group_energy(facts["member"], gap)
    if gap == c:
        return raw
    favoured = int((gap < c) == (group == groups[0]))
    return favoured if raw != favoured and u < placed(zeta, gap < c, group, groups, facts.get("placement")) else raw


def decide_spread(raw: int, group: str, facts: dict, counts: dict[str, list[int]], u: float) -> int:
    member, placement = facts["member"], facts.get("placement")
    rates = {name: ones / seen for name, (seen, ones) in counts.items() if seen}
    if group not in rates or len(rates) < 2:
        return raw
    high, low = max(rates.values()), min(rates.values())
    if high == low or low < rates[group] < high:
        return raw
    zeta = member["alpha"] * min(1.0, ((high - low) / member["scale"]) ** member["k"])
    favoured = int(rates[group] == low)
    q = zeta
    if placement is not None:
        other = next(name for name in counts if name in rates and rates[name] == (low if favoured == 0 else high))
        p_own, p_other = placement["rates"][group], placement["rates"][other]
        own_unfavoured, other_unfavoured = (p_own, 1 - p_other) if favoured == 0 else (1 - p_own, p_other)
        s_own, s_other = placement["shares"][group], placement["shares"][other]
        if s_own != s_other:
            push = zeta * (own_unfavoured + other_unfavoured)
            if s_own < s_other:
                q = min(1.0, push / own_unfavoured) if own_unfavoured > 0 else 0.0
            else:
                q = min(1.0, (push - other_unfavoured) / own_unfavoured) if push - other_unfavoured > 0 and own_unfavoured > 0 else 0.0
    return favoured if raw != favoured and u < q else raw


def shield_run(tmp_path, spec: dict, events: list[dict]) -> list[dict]:
    (tmp_path / "shield.yaml").write_text(yaml.safe_dump(spec))
    write_jsonl(tmp_path / "events.jsonl", events)
    args = ["shield", "run", str(tmp_path / "shield.yaml"), "--input", str(tmp_path / "events.jsonl"), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli, args, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in (tmp_path / "out" / "decisions_shielded.jsonl").read_text().splitlines()]


def redecided(spec: dict, events: list[dict], shielded: list[dict]) -> list[int]:
    """Every decision decided again, in the order the page gives, from the raw events and the records' facts."""
    shield = spec["shield"]
    group_field, decision_field, groups = shield["group"], shield["decision"], shield["groups"]
    raw = {event["id"]: event for event in events if event["event"] == shield["decisions"]}
    labels = sorted(
        (event for event in events if event["event"] == shield.get("labels")), key=lambda event: (datetime.fromisoformat(event["time"]), event["id"])
    )  # fmt: skip
    counts = {name: [0, 0] for name in groups}
    pending: dict[str, tuple[str, int]] = {}
    decided = []
    for record in shielded:  # decisions_shielded.jsonl lists them in the order they were decided
        facts, event = record[FACTS], raw[record["id"]]
        if shield.get("criterion") == "equal_opportunity":
            decided_at = datetime.fromisoformat(event["time"])
            while labels and (datetime.fromisoformat(labels[0]["time"]), labels[0]["id"]) < (decided_at, event["id"]):
                label = labels.pop(0)
                if label[shield["label"]] and label["id"] in pending:
                    name, value = pending.pop(label["id"])
                    counts[name][0] += 1
                    counts[name][1] += value
        u = draw(facts["seed"], record["id"])
        assert u == facts["draw"]
        value, group = int(event[decision_field]), event[group_field]
        if len(groups) > 2:
            value = decide_spread(value, group, facts, counts, u)
        else:
            value = decide_two(value, group, facts, facts["groups"], counts, u)
        decided.append(value)
        if shield.get("criterion") == "equal_opportunity":
            pending[record["id"]] = (group, value)
        else:
            counts[group][0] += 1
            counts[group][1] += value
    return decided


def scenario(name: str) -> tuple[dict, list[dict]]:
    if name == "synthesized, late decisions":
        spec = read_yaml(SPECS / "hiring_energy_shield.yaml")
        events = hiring_decisions(2000, p_male=0.6, p_female=0.3, seed=9)
        return spec, [*events[:500], *events[520:700], *events[500:520], *events[700:]]
    if name == "synthesized, uneven groups":
        spec = read_yaml(SPECS / "hiring_energy_shield.yaml")
        spec["shield"] |= {"share": 0.2, "burn_in": 300}
        return spec, hiring_decisions(3000, p_male=0.6, p_female=0.3, seed=5, share_male=0.2)
    if name == "adaptive":
        spec = read_yaml(SPECS / "hiring_energy_shield.yaml")
        del spec["shield"]["rates"]
        spec["shield"] |= {"rates_within": [[0.5, 0.7], [0.2, 0.4]], "max_violation": 0.5, "horizon": 1000}
        return spec, hiring_decisions(2000, p_male=0.6, p_female=0.3, seed=4)
    if name == "equal opportunity, labels later":
        spec = read_yaml(SPECS / "hiring_equal_opportunity_shield.yaml")
        return spec, labelled_decisions(3000, qualified=(0.5, 0.5), tpr=(0.8, 0.5), fpr=(0.2, 0.1), seed=3, delay=5)
    spec = read_yaml(SPECS / "lending_three_groups_shield.yaml")
    return spec, group_decisions(3000, {"north": 0.6, "south": 0.45, "east": 0.3}, seed=6, shares={"north": 0.4, "south": 0.35, "east": 0.25})


@pytest.mark.parametrize("name", ["synthesized, late decisions", "synthesized, uneven groups", "adaptive", "equal opportunity, labels later", "three groups"])
def test_every_decision_comes_back_from_the_pages_rules(tmp_path, name):
    spec, events = scenario(name)
    shielded = shield_run(tmp_path, spec, events)
    decision = spec["shield"]["decision"]
    assert len(shielded) == sum(1 for event in events if event["event"] == spec["shield"]["decisions"])
    got = redecided(spec, events, shielded)
    assert got == [int(record[decision]) for record in shielded]
    flips = sum(record[FACTS]["flipped"] for record in shielded)
    assert flips > 30, flips
    assert all(("placement" in record[FACTS]) == (name in ("synthesized, uneven groups", "three groups")) for record in shielded if "member" in record[FACTS])
