"""Anytime tests take outcomes in opening order, whatever order labels arrive in, and the moment each outcome reaches
a test depends on the event-time stream alone: one partition or sixteen trial buckets, one worker or two processes,
give the same records."""

from __future__ import annotations

import pytest
import yaml

from fairstream.connectors.files import write_jsonl
from fairstream.engine.api import ENGINE
from fairstream.estimators.betting import GapBet
from fairstream.estimators.pairing import RatioPairs
from fairstream.runner import run_file
from tests.helpers import under_any_spec
from tests.studies.error_rates import DELAYED_SPEC, delayed_decisions

LAYOUTS = {
    "keyed, one worker": ({"keyed": True}, {}),
    "trial buckets, one worker": ({"keyed": False}, {}),
    "trial buckets, two processes": ({"keyed": False}, {"processes": 2}),
}
if ENGINE == "plain":  # several processes need bytewax
    del LAYOUTS["trial buckets, two processes"]


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """A stream with a real gap (0.7 vs 0.4) whose group A rejections are decided 10 hours after its approvals."""
    folder = tmp_path_factory.mktemp("delayed")
    events = delayed_decisions(800, (0.7, 0.4), seed=4, negative_delay_a=10)
    write_jsonl(folder / "loans.jsonl", events)
    return folder, events


@pytest.fixture(scope="module")
def runs(stream):
    folder, _ = stream
    results = {}
    for name, (input_changes, how) in LAYOUTS.items():
        # a horizon past the longest decision delay (10 h) and well inside the stream, so trials mature and the
        # records publish the pair's evidence (none is published while a group has no matured cell)
        trial = {**DELAYED_SPEC["trial"], "close_after": "11h"}
        spec = {**DELAYED_SPEC, "input": {**DELAYED_SPEC["input"], **input_changes}, "trial": trial, "publish": {"min_cell": 1}}
        path = folder / f"{name.replace(' ', '-').replace(',', '')}.yaml"
        path.write_text(yaml.safe_dump(spec))
        results[name] = run_file(path, folder / "loans.jsonl", folder / path.stem, **how)
    return results


@pytest.mark.parametrize("layout", [name for name in LAYOUTS if name != "keyed, one worker"])
def test_every_layout_writes_the_records_of_one_partition(runs, layout):
    for name in ("estimates.jsonl", "alerts.jsonl"):
        one = under_any_spec(runs["keyed, one worker"].read(name))  # each layout is a spec file of its own
        assert one
        assert under_any_spec(runs[layout].read(name)) == one


def test_the_tests_wealth_is_the_bets_on_pairs_in_opening_order(runs, stream):
    """The log-wealth at the end equals a betting test fed by hand: each group's decisions in the order the applications
    came in, paired k-th with k-th once both groups have one."""
    _, events = stream
    groups = {e["id"]: e["group"] for e in events if e["kind"] == "APPLY"}
    order = [e["id"] for e in events if e["kind"] == "APPLY"]
    decided = {e["id"]: float(e["approved"]) for e in events if e["kind"] == "DECISION"}
    bet, queue, seen = GapBet(0.1), RatioPairs(), set()
    for key in order:
        seen.add(groups[key])
        if len(seen) == 2:  # a pair opens once both groups have an outcome
            for x, y in queue.push(groups[key] == "A", decided[key]):
                bet.update(x, y)
    final = runs["keyed, one worker"].read("estimates.jsonl")[-1]["parts"]["selection_rate"]
    assert final["log_wealth"] == pytest.approx(max(bet.get()), abs=1e-9)
    assert final["violated"] is True
