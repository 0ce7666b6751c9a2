"""Every shield kind over generated decision streams (declared and undeclared groups, labels early, late, twice or
never, bad label values): no exception, every status record of the wire format, and the counts of undeclared
decisions and overdue labels equal to those computed here from the stream."""

from __future__ import annotations

from functools import cache

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairstream.language.models import ShieldSpec
from fairstream.language.yaml_file import read_yaml
from fairstream.records import wire
from fairstream.records.chain import RecordChain
from fairstream.records.events import Event
from fairstream.shields.runtime.decisions import ShieldRun
from tests.conftest import SPECS

LABEL_DELAY = 3
SHIELDS = {
    "synthesized": {"rates": [0.6, 0.3]},
    "adaptive": {"rates": None, "rates_within": [[0.5, 0.7], [0.2, 0.4]]},
    "spread": {"groups": ["male", "female", "other"], "rates": [0.6, 0.3, 0.45], "running": [0, 0.1], "limit": [0, 0.05]},
    "opportunity": None,
}


@cache
def shield(kind: str) -> ShieldSpec:
    """The bundled shield of the kind (synthesized once per test session: the synthesis is cached)."""
    if kind == "opportunity":
        body = read_yaml(SPECS / "hiring_equal_opportunity_shield.yaml")["shield"] | {"label_delay": LABEL_DELAY, "max_violation": 0.5}
    else:
        body = read_yaml(SPECS / "hiring_energy_shield.yaml")["shield"] | {"max_violation": 0.5, "horizon": 500} | SHIELDS[kind]
    return ShieldSpec.model_validate({key: value for key, value in body.items() if value is not None} | {"status_every": 7})


decision = st.tuples(st.sampled_from(["male", "female", "other", "nobody"]), st.booleans(), st.sampled_from([0, 1, 5, None, "late"]), st.sampled_from([True, False, 1, 0, "yes"]))
"""(group, hired, when the label comes: decisions later, never, or after the last; the label's value)."""


def events_of(drawn: list[tuple]) -> list[Event]:
    """Each decision, and its label where it comes: after the decision `delay` places on, or after the last."""
    labels: dict[int, list[Event]] = {}
    for index, (_, _, delay, value) in enumerate(drawn):
        if delay is not None:
            at = len(drawn) if delay == "late" else index + delay
            labels.setdefault(at, []).append(Event(str(index), 0, "LABEL", {"qualified": value}))
    events = []
    for index, (group, hired, _, _) in enumerate(drawn):
        events.append(Event(str(index), index, "DECISION", {"gender": group, "hired": hired}))
        events.extend(labels.get(index, []))
    return events + labels.get(len(drawn), [])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(SHIELDS)), drawn=st.lists(decision, max_size=60))
def test_every_shield_answers_every_stream(kind, drawn):
    spec = shield(kind)
    run = ShieldRun(spec, "generated", "0" * 64)
    records = [record for event in events_of(drawn) for record in run.receive(event)] + run.closing()
    chain = RecordChain("shield/generated", "0" * 64)
    for record in records:
        if record["type"] == "shield.decision":  # the decision maker's own record, with the shield's facts
            msgspec.convert(record, wire.ShieldDecision)
        else:  # linked into the writer's chain as the dataflow links it
            wire.check(chain.link(record))
    statuses = [record for record in records if record["type"] == "shield.status"]
    undeclared = sum(group not in spec.groups for group, *_ in drawn)
    decided = len(drawn) - undeclared
    if not drawn:
        assert statuses == []
        return
    report = statuses[-1]["assumptions"]
    assert statuses[-1]["decisions"] == decided and report["groups"]["breaks"] == undeclared
    if kind == "opportunity":  # a declared decision is overdue once LABEL_DELAY + 1 declared decisions followed it unlabelled
        numbers = [index for index, (group, *_) in enumerate(drawn) if group in spec.groups]
        overdue = 0
        for number, index in enumerate(numbers, 1):
            arrives = drawn[index][2]
            first_late = numbers[number + LABEL_DELAY] if number + LABEL_DELAY < len(numbers) else None  # the decision that makes it overdue
            if first_late is not None and (arrives in (None, "late") or index + arrives >= first_late):
                overdue += 1
        assert report["label_delay"]["breaks"] == overdue
