"""The recovery store before a resume: a snapshot a killed execution left for an epoch it never finished must not be
loaded by a later resume. Real bytewax executions against a real store; the killed execution's snapshot is the one
row a SIGKILL between writing snapshots and recording progress leaves behind."""

from __future__ import annotations

import pickle
import sqlite3
from datetime import timedelta

import pytest

pytest.importorskip("bytewax", reason="a recovery store is bytewax's: it installs on Python 3.11 and 3.12")

import bytewax.operators as op  # noqa: E402
from bytewax.dataflow import Dataflow  # noqa: E402
from bytewax.inputs import AbortExecution, FixedPartitionedSource, StatefulSourcePartition  # noqa: E402
from bytewax.recovery import RecoveryConfig  # noqa: E402
from bytewax.testing import TestingSink, run_main  # noqa: E402

from fairstream.connectors.recovery import prepare_store, resume_epoch  # noqa: E402

CRASH = "crash"
"""A batch that ends the execution abruptly: no end-of-input snapshot, as after a SIGKILL."""


class _Batches(StatefulSourcePartition):
    def __init__(self, batches):
        self._batches = list(batches)

    def next_batch(self):
        if not self._batches:
            raise StopIteration
        batch = self._batches.pop(0)
        if batch == CRASH:
            raise AbortExecution()
        return batch

    def snapshot(self):
        return None


class KeysSource(FixedPartitionedSource):
    """The given batches of keys, one batch per epoch-sized step, in every execution (the position is not resumed)."""

    def __init__(self, batches):
        self._batches = batches

    def list_parts(self):
        return ["keys"]

    def build_part(self, step_id, for_part, resume_state):
        return _Batches(self._batches)


def count_keys(store, batches) -> dict[str, int]:
    """Run a per-key counter over `batches` against the store; the last count seen per key."""
    flow = Dataflow("counter")
    keyed = op.key_on("key", op.input("in", flow, KeysSource(batches)), lambda key: key)
    counts = op.stateful_map("count", keyed, lambda total, _key: ((total or 0) + 1,) * 2)
    out: list = []
    op.output("out", counts, TestingSink(out))
    run_main(flow, epoch_interval=timedelta(0), recovery_config=RecoveryConfig(store))
    return dict(out)


def abandon_snapshot(store, key: str, state: int) -> None:
    """What a SIGKILL leaves: a snapshot of `key` for the epoch the next execution resumes at, never committed."""
    epoch = resume_epoch(store)
    with sqlite3.connect(store / "part-0.sqlite3") as db:
        (step,) = db.execute("SELECT step_id FROM snaps WHERE state_key = ?", (key,)).fetchone()
        db.execute("INSERT INTO snaps (step_id, state_key, snap_epoch, ser_change) VALUES (?, ?, ?, ?)", (step, key, epoch, pickle.dumps(state)))


def test_a_resume_never_loads_a_snapshot_of_an_unfinished_epoch(tmp_path):
    store = tmp_path / "recovery"
    prepare_store(store)
    assert count_keys(store, [["a"], ["a"]]) == {"a": 2}
    abandon_snapshot(store, "a", 999)
    prepare_store(store)  # as every run does before it starts
    assert count_keys(store, [["b"]] * 5 + [CRASH]) == {"b": 5}  # commits past the abandoned epoch, never touching a
    prepare_store(store)
    assert count_keys(store, [["a"]]) == {"a": 3}


def test_without_the_cleanup_the_abandoned_snapshot_comes_back(tmp_path):
    """The failure the cleanup prevents, shown on bytewax itself: state jumps to what the killed execution had."""
    store = tmp_path / "recovery"
    prepare_store(store)
    count_keys(store, [["a"], ["a"]])
    abandon_snapshot(store, "a", 999)
    count_keys(store, [["b"]] * 5 + [CRASH])
    assert count_keys(store, [["a"]]) == {"a": 1000}


def test_the_resume_epoch_is_the_least_worker_frontier_of_the_latest_execution(tmp_path):
    store = tmp_path / "recovery"
    prepare_store(store)
    assert resume_epoch(store) is None
    with sqlite3.connect(store / "part-0.sqlite3") as db:
        db.execute("INSERT INTO exs (ex_num, worker_count, resume_epoch) VALUES (0, 1, 1), (1, 3, 11)")
        db.execute("INSERT INTO fronts (ex_num, worker_index, worker_frontier) VALUES (0, 0, 40), (1, 0, 13), (1, 1, 12), (1, 2, 13)")
    assert resume_epoch(store) == 12
    with sqlite3.connect(store / "part-0.sqlite3") as db:
        db.execute("DELETE FROM fronts WHERE ex_num = 1 AND worker_index = 1")
    assert resume_epoch(store) == 11  # a worker with no recorded frontier resumes where its execution began
