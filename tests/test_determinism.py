"""The determinism contract on COMPAS: one worker, two worker threads and two worker processes write the same records, with the same ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairstream.runner import run_file
from tests.conftest import needs_bytewax
from tests.test_compas_reference import without_emitted_at

pytestmark = needs_bytewax

SPEC = "compas_equalized_odds.yaml"
LAYOUTS = {"one worker": {}, "again": {}, "two threads": {"workers": 2}, "two processes": {"processes": 2}}


@pytest.fixture(scope="module")
def runs(specs_dir: Path, compas_csv: Path, tmp_path_factory):
    return {
        name: run_file(specs_dir / SPEC, compas_csv, tmp_path_factory.mktemp(name.replace(" ", "-")), **how)
        for name, how in LAYOUTS.items()
    }


@pytest.mark.parametrize("layout", ["two threads", "two processes"])
@pytest.mark.parametrize("name", ["alerts.jsonl", "estimates.jsonl", "dead_letters.jsonl"])
def test_several_workers_write_what_one_worker_writes(runs, layout, name):
    one = without_emitted_at(runs["one worker"].read(name))
    if name != "dead_letters.jsonl":
        assert one, f"the one-worker run wrote no {name}"
    assert without_emitted_at(runs[layout].read(name)) == one


def test_alert_ids_are_the_same_in_a_second_run_and_unique_within_one(runs):
    def ids(run) -> list[str]:
        return [r["alert_id"] for name in ("alerts.jsonl", "estimates.jsonl") for r in run.read(name)]

    first, second = ids(runs["one worker"]), ids(runs["again"])
    assert first == second
    assert len(set(first)) == len(first)
    assert without_emitted_at(runs["again"].read("alerts.jsonl")) == without_emitted_at(runs["one worker"].read("alerts.jsonl"))
