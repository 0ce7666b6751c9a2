"""Equal opportunity on the decision path: the shield acts on the gap in true-positive rates, each decision counted
once its label says qualified. Through the dataflow with labels arriving later, the shipped spec brings the TPR gap
into L; on independent streams through the runtime shield the TPR gap leaves S no more often than the synthesized
bound says — labels right after their decision, as the theory has it, and ten decisions later with the bound
synthesized for that delay (a shield synthesized for no delay leaves S more often than it says then)."""

from __future__ import annotations

import math

import pytest

from fairstream.compiler.load import load_plan
from fairstream.connectors.files import RecordSource
from fairstream.dataflow.shield_flow import build_shield_flow
from fairstream.engine.api import run_main
from fairstream.language.models import ShieldSpec
from fairstream.records.envelope import SHIELDED
from fairstream.records.events import Event
from fairstream.records.timefmt import time_parser
from fairstream.shields.runtime.configured import configure
from fairstream.shields.runtime.decisions import SHIELD_FIELD, ShieldRun
from tests.conftest import SPECS
from tests.list_sink import ListSink
from tests.streams import labelled_decisions

_parse = time_parser("iso")


def tpr_gap(decisions: list[dict], labels: dict[str, bool]) -> float:
    """Hire rate of qualified men minus that of qualified women, counted plainly."""
    rates = {}
    for gender in ("male", "female"):
        hired = [d["hired"] for d in decisions if d["gender"] == gender and labels[d["id"]]]
        rates[gender] = sum(hired) / len(hired)
    return rates["male"] - rates["female"]


def test_the_shipped_shield_brings_the_tpr_gap_into_l_with_labels_arriving_later():
    plan = load_plan(SPECS / "hiring_equal_opportunity_shield.yaml")
    events = labelled_decisions(6000, qualified=(0.5, 0.5), tpr=(0.8, 0.5), fpr=(0.2, 0.1), seed=3, delay=5)
    out: list = []
    run_main(build_shield_flow(plan, RecordSource(lambda: [dict(e) for e in events]), ListSink(out)))
    labels = {e["id"]: e["qualified"] for e in events if e["event"] == "LABEL"}
    raw = [e for e in events if e["event"] == "DECISION"]
    shielded = [r["record"] for r in out if r["type"] == SHIELDED]
    assert [r["id"] for r in shielded] == [d["id"] for d in raw]  # every decision answered, labels answered nothing
    assert tpr_gap(raw, labels) > 0.25
    assert -0.05 - 0.03 <= tpr_gap(shielded, labels) <= 0.05 + 0.03
    flipped = [r for r in shielded if r[SHIELD_FIELD]["flipped"]]
    assert len(flipped) > 100 and all(r["hired"] != d["hired"] for r in flipped for d in [raw[int(r["id"]) - 1]])
    status = [r for r in out if r["type"] == "shield.status"][-1]
    assert status["criterion"] == "equal_opportunity" and status["unmatched"] == 0 and status["dropped"] == 0
    decided = raw[: status["decisions"]]
    known = decided[: len(decided) - status["pending"]]  # labels come in decision order: the last six await theirs
    assert status["pending"] == 6 and sum(status["groups"][g]["decisions"] for g in ("male", "female")) == sum(labels[d["id"]] for d in known)


SMALL = {
    "criterion": "equal_opportunity", "decisions": "DECISION", "labels": "LABEL", "label": "qualified", "group": "gender",
    "decision": "hired", "groups": ["male", "female"], "burn_in": 80, "running": [-0.15, 0.15], "limit": [-0.06, 0.06],
    "rates": [0.75, 0.45], "share": 0.5, "max_violation": 0.1, "horizon": 300, "seed": 5,
}  # fmt: skip


def left_s(run: ShieldRun, events: list[dict], spec: ShieldSpec) -> bool:
    """Whether the TPR gap of the shielded decisions left S after some qualified count t in [τ, T]."""
    for record in events:
        event = Event(record["id"], _parse(record["time"]), record["event"], record)
        run.receive(event)
        if record["event"] == "LABEL" and record["qualified"]:
            counts = run.state
            qualified = counts.seen_a + counts.seen_b
            if qualified > spec.horizon:
                return False
            if qualified >= spec.burn_in and not spec.running[0] <= counts.gap <= spec.running[1]:
                return True
    return False


@pytest.mark.parametrize("delay", [0, 10])
def test_the_tpr_gap_leaves_s_no_more_often_than_the_bound_on_independent_streams(delay):
    spec = ShieldSpec.model_validate({**SMALL, "label_delay": delay})
    configured = configure(spec)
    bound = configured.assessment.probability_bound
    assert bound <= spec.max_violation and "TPR gap leaves S" in configured.summary(spec) and "qualified decisions 80–300" in configured.summary(spec)
    runs = 500
    left = 0
    for stream in range(runs):
        events = labelled_decisions(700, qualified=(0.5, 0.5), tpr=(0.75, 0.45), fpr=(0.3, 0.1), seed=10_000 + stream, delay=delay)
        left += left_s(ShieldRun(spec, "unit"), events, spec)
    rate = left / runs
    assert rate <= bound + 2 * math.sqrt(bound * (1 - bound) / runs), (rate, bound)


def test_late_labels_break_a_bound_synthesized_without_them():
    """Why label_delay exists: the member synthesized for labels known at once, fed labels ten decisions late."""
    prompt, late = ShieldSpec.model_validate(SMALL), ShieldSpec.model_validate({**SMALL, "label_delay": 10})
    bound = configure(prompt).assessment.probability_bound
    assert configure(late).alpha > configure(prompt).alpha  # a steeper member for the delay
    runs = 300
    left = sum(left_s(ShieldRun(prompt, "unit"), labelled_decisions(700, (0.5, 0.5), (0.75, 0.45), (0.3, 0.1), seed=20_000 + s, delay=10), prompt) for s in range(runs))
    assert left / runs > bound  # 0.127 against 0.099 on these seeded streams
