"""The page on groups you do not record runs as written: its commands print what it shows, its spec is the bundled
one, its BISG example gives the numbers in its comment, and its measured table is what `fairstream bench proxies`
prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

from fairstream.paths import SPECS_DIR
from fairstream.proxies import bisg
from tests.docs.markdown import ROOT, blocks

PAGE = (ROOT / "docs" / "proxy-groups.md").read_text()
CONSOLE = {**os.environ, "NO_COLOR": "1", "COLUMNS": "250"}


def fairstream(*args: str, cwd) -> str:
    done = subprocess.run([sys.executable, "-m", "fairstream.cli", *args], capture_output=True, text=True, cwd=cwd, env=CONSOLE, timeout=600)
    assert done.returncode in (0, 3), done.stderr + done.stdout
    return done.stdout


def test_the_example_prints_what_the_page_shows(tmp_path):
    commands = [line for line in blocks(PAGE, "bash")[0].splitlines() if line.startswith("fairstream ")]
    printed = [fairstream(*line.split()[1:], cwd=tmp_path) for line in commands]
    shown = blocks(PAGE, "text")
    assert " ".join(shown[0].split()) in " ".join(printed[0].split())
    assert " ".join(shown[1].split()) in " ".join(printed[1].split())
    truth = re.search(r"white .*?approved (0\.\d+)\).*black .*?approved (0\.\d+)\)", printed[0])
    assert f"{float(truth[1]) - float(truth[2]):.4f} in truth" in PAGE


def test_the_spec_on_the_page_is_the_bundled_one():
    bundled = yaml.safe_load((SPECS_DIR / "lending_bisg.yaml").read_text())
    shown = yaml.safe_load(blocks(PAGE, "yaml")[0])
    for section, body in shown.items():
        expected = {key: bundled[section][key] for key in body} if isinstance(body, dict) else bundled[section]
        assert body == expected, section


def test_the_bisg_example_gives_the_numbers_in_its_comment():
    probabilities = bisg("GARCIA", "90022")
    comment = re.search(r"\{'white': ([\d.]+), \.\.\., 'hispanic': ([\d.]+)\}", PAGE)
    assert f"{probabilities['white']:.4f}" == comment[1] and f"{probabilities['hispanic']:.4f}" == comment[2]


def test_the_benchmark_prints_the_pages_measures(tmp_path):
    printed = fairstream("bench", "proxies", "--runs", "10", "--trials", "1000", "--looks", "3", cwd=tmp_path)
    for measure in ("fixed-time, one look", "false alarms, confident", "calibration-only bounds missing a rate", "probability-weighted rates, mean", "found miscalibrated"):
        assert measure in printed


@pytest.mark.slow
def test_the_measured_table_is_what_the_benchmark_prints(tmp_path):
    printed = fairstream("bench", "proxies", "--figure", str(tmp_path / "gaps.png"), cwd=tmp_path)
    rows = re.findall(r"│\s+(0\.\d\d)\s+│\s+([\d.]+)%\s+│\s+([\d.]+)%", printed)
    fixed, anytime = [float(row[1]) for row in rows], [float(row[2]) for row in rows]
    assert f"| {min(fixed):.1f}–{max(fixed):.1f} % |" in PAGE and f"| {min(anytime):.1f}–{max(anytime):.1f} % |" in PAGE
    moments, weighted = re.search(r"moment estimate, mean\s+│\s+([\d.]+)", printed)[1], re.search(r"weighted rates, mean\s+│\s+([\d.]+)", printed)[1]
    assert f"moments {moments}, weighted {weighted}" in PAGE and f"it reports {weighted} for a true gap" in PAGE
    end = re.search(r"at the end weighted ([\d.]+)", printed)[1]
    assert f"it reports a gap of {end}" in PAGE
    assert (tmp_path / "gaps.png").stat().st_size > 10_000
