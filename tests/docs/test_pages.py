"""The documentation cannot drift from the code: the spec reference is generated and every field describes itself,
and the README's spec example, run on the COMPAS file, raises the alert the README shows."""

from __future__ import annotations

import json
import re

import pytest

from fairstream.language.models import Spec
from fairstream.language.reference import missing_descriptions, reference_markdown
from fairstream.runner import run_file
from tests.docs.markdown import ROOT, blocks, normalized


def test_every_spec_field_has_a_description():
    assert missing_descriptions() == []


def test_the_reference_lists_every_field_of_every_section():
    schema = Spec.model_json_schema()
    text = reference_markdown()
    for model in [schema, *schema["$defs"].values()]:
        for field in model.get("properties", {}):
            assert f"| `{field}` |" in text


def test_the_readme_spec_raises_the_alert_the_readme_shows(compas_csv, tmp_path):
    readme = (ROOT / "README.md").read_text()
    (spec,) = blocks(readme, "yaml")
    (shown,) = blocks(readme, "json")
    (tmp_path / "parity.yaml").write_text(spec)
    alert = run_file(tmp_path / "parity.yaml", compas_csv, tmp_path / "out").read("alerts.jsonl")[0]
    for field, value in json.loads(shown).items():
        if isinstance(value, float):
            assert alert[field] == pytest.approx(value, abs=1e-3), field
        else:
            assert alert[field] == value, field


def test_readme_is_short_and_every_page_it_links_exists():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for target in re.findall(r"\]\((docs/[^)]+)\)", readme):
        assert (ROOT / target).is_file(), target


def test_the_console_output_getting_started_shows_is_what_the_command_prints(compas_csv, tmp_path):
    """Every line of the documented `fairstream run compas_equalized_odds` output (rows left out are marked …) is a
    line the command prints on the COMPAS file."""
    import subprocess
    import sys

    page = (ROOT / "docs" / "getting-started.md").read_text()
    shown = next(block for block in blocks(page, "") if block.startswith("Final rates at"))
    result = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--input", str(compas_csv), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    printed = {normalized(line) for line in result.stdout.splitlines()}
    expected = [normalized(line) for line in shown.splitlines() if line.strip() not in ("…", "")]
    assert len(expected) > 15
    assert [line for line in expected if line not in printed] == []
