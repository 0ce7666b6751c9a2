"""The plain engine (`FAIRSTREAM_ENGINE=plain`, the engine where bytewax does not install) writes the records bytewax
writes: the same monitors over COMPAS (one job of several monitors with its merged alarm among them), the same
shield over hiring decisions; and it refuses what only bytewax does in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import hiring_decisions
from tests.conftest import SPECS

MONITORS = ["compas_equalized_odds", "compas_equalized_odds_anytime", "compas_disparate_impact"]


def fairstream(*args: str, engine: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", *args], env={**os.environ, "FAIRSTREAM_ENGINE": engine}, capture_output=True, text=True, timeout=600)


def records(out: Path) -> dict[str, list[dict]]:
    """Every record of every output file, but the wall-clock time it was written at."""
    return {path.name: [{k: v for k, v in orjson.loads(line).items() if k != "emitted_at"} for line in path.read_bytes().splitlines()] for path in sorted(out.glob("*.jsonl"))}


def test_several_monitors_over_compas_write_the_same_records_on_both_engines(compas_csv, tmp_path):
    pytest.importorskip("bytewax", reason="bytewax, the reference engine, installs on Python 3.11 and 3.12")
    runs = {engine: fairstream("run", *MONITORS, "--input", str(compas_csv), "--out", str(tmp_path / engine), engine=engine) for engine in ("bytewax", "plain")}
    for engine, run in runs.items():
        assert run.returncode == 0, f"{engine}: {run.stderr}"
    written = {engine: records(tmp_path / engine) for engine in runs}
    assert written["plain"] == written["bytewax"]
    assert len(written["plain"]["estimates.jsonl"]) > 1000 and written["plain"]["alerts.jsonl"]


def test_a_shield_decides_the_same_on_both_engines(tmp_path):
    pytest.importorskip("bytewax", reason="bytewax, the reference engine, installs on Python 3.11 and 3.12")
    decisions = tmp_path / "decisions.jsonl"
    write_jsonl(decisions, hiring_decisions(5000, p_male=0.5, p_female=0.2, seed=4))
    spec = str(SPECS / "hiring_energy_shield.yaml")
    runs = {engine: fairstream("shield", "run", spec, "--input", str(decisions), "--out", str(tmp_path / engine), engine=engine) for engine in ("bytewax", "plain")}
    for engine, run in runs.items():
        assert run.returncode == 0, f"{engine}: {run.stderr}"
    written = {engine: records(tmp_path / engine) for engine in runs}
    assert written["plain"] == written["bytewax"]
    assert len(written["plain"]["decisions_shielded.jsonl"]) == 5000 and written["plain"]["alerts.jsonl"]


@pytest.mark.parametrize("extra", [["--recovery", "store"], ["--processes", "2"]])
def test_the_plain_engine_refuses_what_only_bytewax_does_in_one_line(compas_csv, tmp_path, extra):
    extra = [str(tmp_path / value) if value == "store" else value for value in extra]
    run = fairstream("run", "compas_equalized_odds", "--input", str(compas_csv), "--out", str(tmp_path / "out"), *extra, engine="plain")
    assert run.returncode == 2, run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: ") and "need bytewax" in line
