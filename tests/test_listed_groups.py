"""A listed group that never appears is named, with the group values that did appear (counted by pandas), in a warning,
the summary and the estimate records; a run whose trials all fall outside the list says so instead of 'no trial closed'."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.verdicts.tracked import MAX_UNLISTED, OTHER_VALUES
from tests.helpers import german_decisions

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
SPEC = """\
monitor: german-{name}
input: {{time: date, key: id, kinds: {{DECISION: {{sex: str, age: int, approved: bool}}}}}}
trial: {{close_on: [DECISION]}}
variables:
  sex: {{first: DECISION, field: sex}}
  band: {{first: DECISION, expr: "'under_25' if age < 25 else 'over_25'"}}
  approved: {{first: DECISION, field: approved}}
metric: {{type: demographic_parity, group: {group}, prediction: approved, groups: {groups}, threshold: 0.1}}
evaluate: {{every: 1d}}
"""


@pytest.fixture(scope="module")
def german(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    folder = tmp_path_factory.mktemp("german")
    frame = german_decisions(lambda index: f"2024-01-{index // 40 + 1:02d}")
    frame.to_csv(folder / "german.csv", index=False)
    return folder, frame


def run(folder: Path, name: str, group: str, groups: str):
    spec = folder / f"{name}.yaml"
    spec.write_text(SPEC.format(name=name, group=group, groups=groups))
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(folder / "german.csv"), "--out", str(folder / name)], env=ENV)
    assert result.exit_code == 0, result.output + repr(result.exception)
    estimates = [json.loads(line) for line in (folder / name / "estimates.jsonl").read_text().splitlines()]
    return result, estimates[-1]


def test_misspelt_groups_are_named_with_the_values_seen(german):
    folder, frame = german
    result, last = run(folder, "caps", "sex", "[Male, Female]")
    counts = frame["sex"].value_counts()
    assert last["unseen_groups"] == ["Male", "Female"]
    assert last["unlisted_groups"] == {value: int(trials) for value, trials in counts.items()}
    assert "no trial closed" not in result.stdout
    assert f"closed trials: {len(frame):,}, none of them counted in a group the metric estimates" in result.stdout
    final = [line for line in result.stderr.splitlines() if f"'male' ({counts['male']})" in line]
    assert len(final) == 1 and "'Male', 'Female'" in final[0] and "metric.groups" in final[0]
    assert final[0].index("'male'") < final[0].index("'female'")  # the larger of two equally near values first


def test_a_near_spelling_comes_first(german):
    folder, frame = german
    result, last = run(folder, "bands", "band", "[under25, over_25]")
    under = int((frame["age"] < 25).sum())
    assert last["unseen_groups"] == ["under25"] and last["unlisted_groups"] == {"under_25": under}
    assert last["parts"]["selection_rate"]["status"] == "inconclusive"
    assert f"listed group(s) 'under25'; group values seen outside metric.groups (trials): 'under_25' ({under:,})" in result.stderr


def test_groups_all_present_say_nothing(german):
    folder, _frame = german
    result, last = run(folder, "right", "sex", "[male, female]")
    assert "unseen_groups" not in last and "unlisted_groups" not in last and "warning" not in result.stderr


def test_unlisted_values_are_bounded(german):
    folder, frame = german
    frame = frame.assign(sex=[f"v{index % 50:02d}" if index % 3 else sex for index, sex in enumerate(frame["sex"])])
    frame.to_csv(folder / "many.csv", index=False)
    spec = folder / "many.yaml"
    spec.write_text(SPEC.format(name="many", group="sex", groups="[male, female]"))
    result = CliRunner().invoke(cli, ["run", str(spec), "--input", str(folder / "many.csv"), "--out", str(folder / "many")], env=ENV)
    assert result.exit_code == 0, result.output
    last = json.loads((folder / "many" / "estimates.jsonl").read_text().splitlines()[-1])
    unlisted = last["unlisted_groups"]
    assert len(unlisted) == MAX_UNLISTED + 1 and OTHER_VALUES in unlisted
    assert sum(unlisted.values()) == int(frame["sex"].str.startswith("v").sum())
