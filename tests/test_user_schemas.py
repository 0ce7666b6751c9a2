"""Users' own event shapes: fields in nested JSON addressed by dotted paths, a stream of one kind of record without
a kind field, and a CSV file without a header line; each gives the results of the flat, headed input."""

from __future__ import annotations

import csv

import pytest
import yaml
from click.testing import CliRunner

from fairstream import FairnessMonitor
from fairstream.cli import cli
from fairstream.compiler.load import parse_spec
from fairstream.compiler.plan import build_plan
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.records.errors import SpecError
from fairstream.runner import FileRun, run_file
from tests.conftest import SPECS
from tests.kafka.outputs import without_emitted_at

NESTED_SPEC = {
    "monitor": "hiring-nested",
    "input": {
        "time": "meta.decided_at",
        "key": "applicant.id",
        "kinds": {"DECISION": {"applicant.profile.gender": "str", "outcome.hired": "bool", "outcome.score": "int"}},
    },
    "trial": {"close_on": ["DECISION"]},
    "variables": {
        "group": {"first": "DECISION", "field": "applicant.profile.gender"},
        "hired": {"first": "DECISION", "expr": "outcome.hired and outcome.score >= 0"},
    },
    "metric": {"type": "demographic_parity", "group": "group", "prediction": "hired", "groups": "all", "threshold": 0.1},
    "estimator": {"prior": 0.5, "confidence": 24, "min_trials": 1},
    "evaluate": {"on": "close"},
}


def nested(decision: dict) -> dict:
    """A flat hiring decision in the shape a user's service might send it."""
    return {
        "meta": {"decided_at": decision["time"], "source": "hiring-service"},
        "applicant": {"id": decision["id"], "profile": {"gender": decision["gender"]}},
        "outcome": {"hired": decision["hired"], "score": 3},
    }


def parts_and_verdicts(records: list[dict]) -> list[tuple]:
    return [(r["type"], r["event_time"], repr(r.get("parts") or r.get("groups"))) for r in without_emitted_at(records)]


def test_nested_records_without_a_kind_field_give_the_flat_records_results(tmp_path):
    decisions = hiring_decisions(400, 0.5, 0.3, seed=3)
    write_jsonl(tmp_path / "flat.jsonl", decisions)
    write_jsonl(tmp_path / "nested.jsonl", [nested(d) for d in decisions])
    (tmp_path / "nested.yaml").write_text(yaml.safe_dump(NESTED_SPEC))
    flat = run_file(SPECS / "hiring_demographic_parity.yaml", tmp_path / "flat.jsonl", tmp_path / "flat")
    mine = run_file(tmp_path / "nested.yaml", tmp_path / "nested.jsonl", tmp_path / "out")
    for family in ("estimates.jsonl", "alerts.jsonl"):
        assert parts_and_verdicts(mine.read(family)) == parts_and_verdicts(flat.read(family)), family
    assert len(flat.read("estimates.jsonl")) == 400 and mine.read("dead_letters.jsonl") == []


def test_a_missing_nested_field_is_a_dead_letter_naming_its_path():
    monitor = FairnessMonitor([build_plan(parse_spec(NESTED_SPEC))])
    record = nested(hiring_decisions(1, 0.5, 0.5, seed=1)[0])
    del record["applicant"]["profile"]
    letters = monitor.feed([record])
    assert [(letter["reason"], letter["detail"]) for letter in letters] == [("missing_field", "DECISION events need field 'applicant.profile.gender'")]


def test_a_spec_without_a_kind_field_needs_exactly_one_kind():
    two = {**NESTED_SPEC, "input": {**NESTED_SPEC["input"], "kinds": {"DECISION": {}, "APPEAL": {}}}}
    with pytest.raises(SpecError, match="input: without a kind field every record is of one kind, so kinds must name exactly one; got DECISION, APPEAL"):
        parse_spec(two)


def test_a_headerless_csv_with_its_columns_gives_the_headed_files_results(tmp_path):
    decisions = hiring_decisions(300, 0.5, 0.3, seed=5)
    columns = ["event", "id", "time", "gender", "hired"]
    with (tmp_path / "headed.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(decisions)
    lines = (tmp_path / "headed.csv").read_text().splitlines(keepends=True)
    (tmp_path / "bare.csv").write_text("".join(lines[1:]))
    spec = SPECS / "hiring_demographic_parity.yaml"
    headed = run_file(spec, tmp_path / "headed.csv", tmp_path / "headed")
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(tmp_path / "bare.csv"), "--columns", ",".join(columns), "--out", str(tmp_path / "bare")])
    assert result.exit_code == 0, result.output
    bare = FileRun(tmp_path / "bare")
    assert without_emitted_at(bare.read("estimates.jsonl")) == without_emitted_at(headed.read("estimates.jsonl"))
    assert len(headed.read("estimates.jsonl")) == 300
