"""A trial ends `close_after` after it opened, in event time: an event dated later never joins it, however the events
are batched, in the native table and in the dict of trials alike, and an opening event then starts the key's next trial."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from fairstream.compiler.load import check_spec
from fairstream.connectors.files import RecordSource
from fairstream.dataflow.flow import build_flow
from fairstream.engine.api import run_main
from fairstream.lab.studies.runs import unsuppressed
from fairstream.trials.bucket import PackedTrials
from tests.list_sink import ListSink

DAY = 86400


def stream(seed: int = 1, applicants: int = 300) -> list[dict]:
    """Applications, some renewed 100–150 days later, each followed by decisions up to 150 days later."""
    rng = random.Random(seed)
    events = []
    for index in range(applicants):
        opened = rng.randrange(0, 100 * DAY)
        group = rng.choice("ab")
        for start in [opened] + ([opened + rng.randrange(100 * DAY, 150 * DAY)] if rng.random() < 0.3 else []):
            events.append({"event": "APPLY", "id": f"A{index}", "t": start, "group": group, "amount": rng.randrange(1, 9) / 2})
            for _ in range(3):
                events.append({"event": "DECISION", "id": f"A{index}", "t": start + rng.randrange(0, 150 * DAY), "approved": rng.random() < 0.5})
    return sorted(events, key=lambda event: (event["t"], event["event"] != "APPLY"))


def spec(with_number: bool) -> dict:
    variables = {"group": {"first": "APPLY", "field": "group"}, "approved": {"last": "DECISION", "field": "approved"}}
    if with_number:  # a float slot (1.0 == 1, 0.0 == -0.0): trials kept in a dict, not the native table
        variables["amount"] = {"first": "APPLY", "field": "amount"}
    return {
        "monitor": "ends",
        "input": {"time": "t", "time_format": "epoch_s", "key": "id", "kind": "event",
                  "kinds": {"APPLY": {"group": "str", "amount": "float"}, "DECISION": {"approved": "bool"}}},
        "trial": {"opens_on": ["APPLY"], "close_after": "90d"},
        "variables": variables,
        "metric": {"type": "demographic_parity", "group": "group", "prediction": "approved", "threshold": 0.1},
        "estimator": {"prior": 0.5, "confidence": 0},
        "evaluate": {"every": "1d"},
    }  # fmt: skip


def reference(events: list[dict]) -> dict[str, tuple[int, int]]:
    """Per group, (approved, trials) over the trials with a decision: a trial is an application and its 90 days."""
    frame = pd.DataFrame(events)
    applications = frame[frame.event == "APPLY"][["id", "t", "group"]].rename(columns={"t": "opened"})
    decisions = frame[frame.event == "DECISION"][["id", "t", "approved"]].merge(applications, on="id")
    inside = decisions[(decisions.t >= decisions.opened) & (decisions.t <= decisions.opened + 90 * DAY)]
    last = inside.sort_values("t").groupby(["id", "opened"]).agg(approved=("approved", "last"), group=("group", "first"))
    counts = last.groupby("group").approved.agg(["sum", "count"])
    return {group: (int(row["sum"]), int(row["count"])) for group, row in counts.iterrows()}


@pytest.mark.parametrize("with_number", [False, True], ids=["native table", "dict of trials"])
def test_the_counts_do_not_depend_on_batching_and_match_pandas(with_number):
    events = stream()
    plan = unsuppressed(check_spec(spec(with_number)))
    assert (plan.layout.exact_slots and PackedTrials is not None) == (not with_number) or PackedTrials is None
    expected = reference(events)
    for batch in (1, 7, 1000):
        records = []
        run_main(build_flow(plan, RecordSource(lambda: events, batch_size=batch), ListSink(records)))
        last = [record for record in records if record.get("type") == "fairness.estimate"][-1]
        got = {group: (cell["hits"], cell["trials"]) for group, cell in last["parts"]["selection_rate"]["groups"].items()}
        assert got == expected, batch
