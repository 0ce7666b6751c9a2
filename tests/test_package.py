"""The distribution: one import package `fairstream` with its specs, commands that run without the `studies` extra,
and a `--help` that imports none of the heavy libraries."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]

WITHOUT = """
import importlib.abc, os, sys
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in os.environ["HIDDEN"].split(","):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
from fairstream.cli import main
sys.argv = ["fairstream", *sys.argv[1:]]
main()
"""
"""Runs the CLI as if the top-level modules named in $HIDDEN were not installed."""


def without_studies(*args: str, cwd: Path, hidden: str = "pandas,sklearn,fairlearn") -> subprocess.CompletedProcess:
    """The CLI run as if the `studies` extra's libraries (or those `hidden` names) were not installed."""
    env = {**os.environ, "HIDDEN": hidden}
    return subprocess.run([sys.executable, "-c", WITHOUT, *args], capture_output=True, text=True, cwd=cwd, timeout=120, env=env)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(folder), str(PROJECT)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return zipfile.ZipFile(next(folder.glob("fairstream-*.whl")))


def test_the_wheel_installs_one_import_package_with_its_specs_and_compiled_trials(wheel):
    names = wheel.namelist()
    assert {name.split("/")[0] for name in names} == {"fairstream", *(n.split("/")[0] for n in names if ".dist-info/" in n)}
    sources = [path.relative_to(PROJECT) for folder in ("pipeline", "connectors") for path in (PROJECT / folder).rglob("*.py")]
    installed = {f"fairstream/{'connectors/' if path.parts[0] == 'connectors' else ''}{'/'.join(path.parts[1:])}" for path in sources}
    assert installed - set(names) == set(), "modules missing from the wheel"
    assert "fairstream/specs/compas_equalized_odds.yaml" in names
    assert {f"fairstream/dashboard/static/{page}" for page in ("index.html", "dashboard.js", "dashboard.css")} <= set(names)
    assert any(name.startswith("fairstream/trials/table.") and name.endswith(".so") for name in names)
    metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    required = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert not any(heavy in line for line in required for heavy in ("pandas", "scikit-learn", "fairlearn"))
    entry_points = wheel.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "fairstream = fairstream.cli:main" in entry_points


def test_help_imports_no_heavy_library():
    probe = "import sys; from fairstream.cli import cli\ntry: cli(['--help'])\nexcept SystemExit: pass\nprint(sorted({'scipy', 'pandas', 'matplotlib', 'bytewax', 'numpy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().endswith("[]"), out.stdout + out.stderr


def test_a_point_verdict_run_starts_without_numpy_scipy_or_matplotlib(tmp_path):
    """What a short run pays before its first event: numpy (anytime tests, credible intervals, groups as probabilities,
    batch judging), scipy (intervals, synthesis) and matplotlib (plots) only where used."""
    (tmp_path / "events.jsonl").write_text('{"event": "SCREEN", "id": "1", "date": "2013-01-01", "race": "a", "sex": "F", "age_cat": "x", "decile_score": 3}\n')
    probe = (
        "import sys; from fairstream.cli import cli\n"
        f"try: cli(['run', 'compas_equalized_odds', '--input', {str(tmp_path / 'events.jsonl')!r}, '--out', {str(tmp_path / 'out')!r}])\n"
        "except SystemExit: pass\n"
        "print(sorted({'numpy', 'scipy', 'matplotlib', 'pandas'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().endswith("[]"), out.stdout + out.stderr
    assert (tmp_path / "out" / "estimates.jsonl").exists()


def test_commands_run_without_the_studies_extra(tmp_path, compas_csv):
    compas = str(compas_csv)
    run = without_studies("run", "compas_equalized_odds", "--input", compas, "--out", "out", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "alerts: 2 violation(s)" in run.stdout
    plot = without_studies("plot", "out", cwd=tmp_path)
    assert plot.returncode == 0 and (tmp_path / "out" / "fairness.png").is_file(), plot.stderr
    simulate = without_studies("shield", "simulate", "--p", "0.3", "--runs", "20", "--steps", "200", cwd=tmp_path)
    assert simulate.returncode == 0, simulate.stderr
    for command in (["replay", "--help"], ["alerts", "--help"], ["demo", "--help"], ["shield", "run", "--help"], ["dashboard", "--help"]):
        assert without_studies(*command, cwd=tmp_path).returncode == 0, command


def test_a_command_that_needs_the_studies_extra_says_how_to_install_it(tmp_path):
    compare = without_studies("shield", "compare", cwd=tmp_path)
    assert compare.returncode == 1
    assert compare.stderr.strip() == "error: fairstream shield compare needs pandas: pip install 'fairstream[lab]'"


def test_the_paper_tables_without_pytorch_say_how_to_install_it(tmp_path):
    tables = without_studies("shield", "tables", cwd=tmp_path, hidden="torch")
    assert tables.returncode == 1
    assert tables.stderr.strip() == "error: fairstream shield tables needs torch: pip install 'fairstream[classifiers]'"
