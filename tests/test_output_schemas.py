"""The published JSON Schemas of the output records (`pipeline/records/schemas/`), checked with the jsonschema library
against real output: alerts and estimates of point, confident-interval, anytime and ratio monitors on COMPAS and of the
credit example, a shield's interventions and statuses, and dead letters; a record that breaks its contract fails."""

from __future__ import annotations

import copy
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import msgspec
import numpy as np
import orjson
import pytest
import yaml
from jsonschema import Draft202012Validator

from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.credit import credit_events
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.records import wire
from fairstream.records.chain import RecordChain
from fairstream.records.cloudevents import SCHEMAS, schema_uri
from fairstream.records.schema_files import RECORDS, schema_text
from fairstream.runner import FileInput, FileOutput, FileRun, Job, execute, run_file
from tests.conftest import SPECS

SCHEMA_DIR = Path(__file__).parents[1] / "pipeline" / "records" / "schemas"
COMPAS_SPECS = ["compas_equalized_odds", "compas_equalized_odds_confident", "compas_equalized_odds_anytime", "compas_disparate_impact", "rtlola_compas_equalized_odds"]


@cache
def schema(name: str) -> dict:
    found = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(found)
    return found


def record_schema(record: dict) -> dict:
    return schema(SCHEMAS[record["type"]])


def validator(record: dict) -> Draft202012Validator:
    return Draft202012Validator(record_schema(record), format_checker=Draft202012Validator.FORMAT_CHECKER)


ELF_SPEC = {
    "monitor": "loans-elf",
    "input": {"time": "time", "key": "id", "kind": "event", "kinds": {"LOAN": {"group": "str", "repaid": "float"}}},
    "trial": {"close_on": ["LOAN"]},
    "variables": {"group": {"first": "LOAN", "field": "group"}, "repaid": {"first": "LOAN", "field": "repaid"}},
    "metric": {"type": "delayed_impact", "group": "group", "outcome": "repaid", "constraints": [{"tau": 0.6, "delta": 0.05}], "groups": ["a", "b"]},
    "estimator": {"outcome_range": [0, 1]},
    "evaluate": {"every": "1d"},
}
"""A delayed-impact constraint, whose alerts name a group rather than a part's groups."""


def loans() -> list[dict]:
    """Repayment shares over 20 days: group b below the constraint's 0.6 for ten days, then above."""
    rng = np.random.default_rng(7)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    return [
        {"event": "LOAN", "id": str(index), "time": (start + timedelta(days=index // 60, minutes=20 * (index % 60))).strftime("%Y-%m-%dT%H:%M:%SZ"),
         "group": "a" if index % 2 else "b", "repaid": float(rng.beta(5, 2) if index % 2 else np.clip(rng.normal(0.5 if index < 600 else 0.8, 0.2), 0, 1))}
        for index in range(1200)
    ]  # fmt: skip


def outputs(run: FileRun) -> list[dict]:
    return [record for name in ("alerts.jsonl", "estimates.jsonl", "dead_letters.jsonl") for record in run.read(name)]


@pytest.fixture(scope="module")
def records(compas_csv, tmp_path_factory) -> list[dict]:
    tmp = tmp_path_factory.mktemp("schemas")
    found = [record for spec in COMPAS_SPECS for record in outputs(run_file(SPECS / f"{spec}.yaml", compas_csv, tmp / spec))]
    write_jsonl(tmp / "credit.jsonl", credit_events(2000, seed=3))
    found += outputs(run_file(SPECS / "credit_applications.yaml", tmp / "credit.jsonl", tmp / "credit"))
    (tmp / "bad.jsonl").write_text('{"not json\n[1, 2]\n{"event": "SCREEN", "id": "1"}\n')
    found += outputs(run_file(SPECS / "compas_equalized_odds.yaml", tmp / "bad.jsonl", tmp / "bad"))
    write_jsonl(tmp / "loans.jsonl", loans())
    (tmp / "elf.yaml").write_text(yaml.safe_dump(ELF_SPEC))
    found += outputs(run_file(tmp / "elf.yaml", tmp / "loans.jsonl", tmp / "elf"))
    write_jsonl(tmp / "hiring.jsonl", hiring_decisions(3000, 0.5, 0.3, seed=2))
    execute(Job(spec=str(SPECS / "hiring_energy_shield.yaml"), input=FileInput(path=str(tmp / "hiring.jsonl"), format="jsonl"),
                output=FileOutput(out_dir=str(tmp / "shield")), shield=True))  # fmt: skip
    return found + outputs(FileRun(tmp / "shield"))


def test_every_record_type_has_a_schema_whose_id_the_cloudevents_name():
    for record_type, name in SCHEMAS.items():
        assert schema(name)["$id"] == schema_uri(name)
        assert record_type in json.dumps(schema(name)["properties"]["type"])
    assert sorted(path.name.removesuffix(".schema.json") for path in SCHEMA_DIR.glob("*.schema.json")) == sorted(set(SCHEMAS.values()))


def test_real_output_of_every_kind_follows_its_schema(records):
    kinds = Counter(record["type"] for record in records)
    assert set(kinds) >= {"fairness.estimate", "fairness.violation", "fairness.recovered", "fairness.certified", "shield.intervention", "shield.status", "pipeline.dead_letter"}
    assert any("constraint" in record for record in records if record["type"] == "fairness.violation")
    for record in records:
        errors = [f"{list(error.path)}: {error.message}" for error in validator(record).iter_errors(record)]
        assert not errors, (record["type"], errors[:3])


@pytest.mark.parametrize(
    ("record_type", "break_it"),
    [
        ("fairness.estimate", lambda r: next(iter(r["parts"].values())).update(status="maybe")),
        ("fairness.estimate", lambda r: r["trials"].pop("closed")),
        ("fairness.violation", lambda r: r.update(violated="yes")),
        ("fairness.violation", lambda r: r.update(alert_id="not-an-id")),
        ("fairness.violation", lambda r: r.pop("groups")),
        ("shield.intervention", lambda r: r.update(probability=1.5)),
        ("shield.status", lambda r: r.update(unknown_field=1)),
        ("pipeline.dead_letter", lambda r: r.pop("reason")),
        ("fairness.estimate", lambda r: r.pop("chain")),
        ("shield.status", lambda r: r["chain"].update(seq=-1)),
    ],
)
def test_a_record_that_breaks_its_contract_fails(records, record_type, break_it):
    record = copy.deepcopy(next(record for record in records if record["type"] == record_type))
    break_it(record)
    assert list(validator(record).iter_errors(record))


def test_the_schema_files_are_generated_from_the_structs():
    for name in RECORDS:
        assert (SCHEMA_DIR / f"{name}.schema.json").read_text() == schema_text(name), f"{name}: python -m fairstream.records.schema_files"


@pytest.mark.parametrize(
    ("record_type", "break_it"),
    [
        ("fairness.estimate", lambda r: r.update(extra_field=1)),
        ("fairness.estimate", lambda r: next(iter(r["parts"].values()))["groups"].update(x={"estimate": 0.5, "hits": 1, "trials": 2, "colour": "red"})),
        ("fairness.violation", lambda r: r.update(violated="yes")),
        ("pipeline.dead_letter", lambda r: r.pop("reason")),
        ("shield.intervention", lambda r: r.update(probability=1.5)),
    ],
)
def test_a_record_its_struct_does_not_describe_is_refused_where_it_is_linked(records, record_type, break_it):
    record = copy.deepcopy(next(record for record in records if record["type"] == record_type))
    break_it(record)
    with pytest.raises(msgspec.ValidationError):
        wire.check(record)
    chain = RecordChain("monitor/m", "0" * 64)
    with pytest.raises(msgspec.ValidationError):
        chain.link(record)


def test_every_record_fits_its_struct_and_the_sink_writes_it_as_it_is(records):
    """Field for field and type for type (an integer stays an integer): the chains' hashes hold over what is written."""
    for record in records:
        assert wire.check(record) is record
        written = json.loads(wire.encode(record))
        assert orjson.dumps(written, option=orjson.OPT_SORT_KEYS) == orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
