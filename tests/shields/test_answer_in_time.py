"""Every decision is answered within `shield.answer_within` of its arrival, however long the next event takes, in a
real dataflow fed by a paced source; an event dated behind a decision already answered is answered marked overtaken
(a decision) or dead-lettered with that reason (any other kind), never lost."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import yaml

from fairstream.compiler.load import load_plan
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.dataflow.shield_flow import build_shield_flow
from fairstream.engine.api import DynamicSink, FixedPartitionedSource, StatefulSourcePartition, StatelessSinkPartition, run_main
from fairstream.language.yaml_file import read_yaml
from fairstream.records.envelope import SHIELDED, STATUS
from fairstream.records.events import RawRecord
from tests.conftest import SPECS
from tests.shields.test_shield_flow import SHIELD

LULL = 4.0
"""Seconds between the first batch of decisions and the next event."""


class _Paced(StatefulSourcePartition):
    def __init__(self, batches: list[tuple[float, list[dict]]]):
        self.batches = list(batches)
        self.started = time.monotonic()
        self.offset = 0

    def next_batch(self) -> list[RawRecord]:
        if not self.batches:
            raise StopIteration
        due, records = self.batches[0]
        if time.monotonic() - self.started < due:
            return []
        self.batches.pop(0)
        self.offset += len(records)
        return [RawRecord(0, self.offset - len(records) + index, dict(record)) for index, record in enumerate(records)]

    def next_awake(self) -> datetime | None:
        if not self.batches:
            return None
        return datetime.now(UTC) + timedelta(seconds=max(0.0, self.batches[0][0] - (time.monotonic() - self.started)))

    def snapshot(self) -> int:
        return self.offset


class PacedSource(FixedPartitionedSource):
    """One partition whose batches come due at given seconds after the flow starts, nothing between them."""

    def __init__(self, batches: list[tuple[float, list[dict]]]):
        self.batches = batches

    def list_parts(self) -> list[str]:
        return ["0-paced"]

    def build_part(self, step_id, for_part, resume_state):
        return _Paced(self.batches)


class _Timed(StatelessSinkPartition):
    def __init__(self, out: list):
        self.out = out

    def write_batch(self, items) -> None:
        now = time.monotonic()
        self.out.extend((now, item) for item in items)


class TimedSink(DynamicSink):
    """Every record with the monotonic time it was written."""

    def __init__(self, out: list):
        self.out = out

    def build(self, step_id, worker_index, worker_count):
        return _Timed(self.out)


def plan_with(tmp_path, answer_within, lateness="0s"):
    spec = read_yaml(SPECS / "hiring_demographic_parity.yaml")
    spec["input"]["lateness"] = lateness
    spec["input"]["kinds"]["NOTE"] = {"text": "str"}
    spec["shield"] = {**SHIELD, "answer_within": answer_within}
    path = tmp_path / "shielded.yaml"
    path.write_text(yaml.safe_dump(spec))
    return load_plan(path)


def run(plan, batches) -> tuple[float, list[tuple[float, dict]]]:
    out: list = []
    started = time.monotonic()
    run_main(build_shield_flow(plan, PacedSource(batches), TimedSink(out)))
    return started, out


def test_the_last_decision_before_a_lull_is_answered_by_the_clock(tmp_path):
    events = hiring_decisions(11, p_male=0.5, p_female=0.2, seed=1)
    batches = [(0.0, events[:10]), (LULL, events[10:])]
    started, out = run(plan_with(tmp_path, 0.3), batches)
    written = {record["id"]: at - started for at, record in out if record["type"] == SHIELDED}
    assert sorted(written, key=int) == [e["id"] for e in events]
    assert written["10"] < LULL / 2  # not held for the next decision
    assert written["11"] >= LULL
    assert not any(record.get("overtaken") for _, record in out)

    started, out = run(plan_with(tmp_path, None), batches)  # waiting for the order: the last one waits for the next
    written = {record["id"]: at - started for at, record in out if record["type"] == SHIELDED}
    assert written["10"] >= LULL


def test_an_event_behind_an_answered_decision_is_answered_marked_overtaken(tmp_path):
    """With an hour's lateness every decision waits for the order; the clock answers them, and a decision dated
    between them that arrives after the lull is answered after them, marked overtaken and counted; a note dated there
    is a dead letter with the reason."""
    events = hiring_decisions(12, p_male=0.5, p_female=0.2, seed=1)
    behind, note = events[5], {"event": "NOTE", "id": "n", "time": events[5]["time"], "text": "x"}
    first = [event for event in events if event is not behind]
    batches = [(0.0, first), (LULL / 2, [behind, note])]
    _, out = run(plan_with(tmp_path, 0.3, lateness="1h"), batches)
    records = [record for _, record in out]
    shielded = [record for record in records if record["type"] == SHIELDED]
    assert [record["id"] for record in shielded] == [e["id"] for e in first] + [behind["id"]]
    assert [record["id"] for record in shielded if record.get("overtaken")] == [behind["id"]]
    assert shielded[-1]["record"]["fairstream_shield"]["overtaken"] is True
    (letter,) = [record for record in records if record["type"] == "pipeline.dead_letter"]
    assert letter["reason"] == "overtaken" and "answer_within" in letter["detail"]
    assert [record for record in records if record["type"] == STATUS][-1]["overtaken"] == 1

    _, out = run(plan_with(tmp_path, None, lateness="1h"), batches)  # the order waited for: in its place, not marked
    shielded = [record for _, record in out if record["type"] == SHIELDED]
    assert [record["id"] for record in shielded] == [e["id"] for e in events]
    assert not any(record.get("overtaken") for record in shielded)
