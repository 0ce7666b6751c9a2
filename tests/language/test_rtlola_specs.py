"""The RTLola paper's monitors written in fairstream's spec language construct by construct (`specs/rtlola_*.yaml`)
give the records of the specs written the short way: COMPAS equalized odds on the real COMPAS file, hiring
demographic parity on an unfair synthetic stream. (The seminar's two properties in one spec, `seminar_parity.yaml`,
are checked against the two seminar specs in `tests/test_metrics_list.py`.)"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import hiring_decisions
from fairstream.runner import run_file
from tests.conftest import SPECS
from tests.helpers import anonymous


def assert_same_records(written: str, short: str | Path, input_path, tmp_path) -> list[dict]:
    """The records of the RTLola spec are the short spec's, but for its trigger's; each trigger record turns where the
    estimate of its evaluation says the paper's condition (some part's gap over 0.1) turns, a withheld gap leaving it
    as it stood."""
    ours = run_file(SPECS / f"{written}.yaml", input_path, tmp_path / written)
    theirs = run_file(short if isinstance(short, Path) else SPECS / f"{short}.yaml", input_path, tmp_path / "short")
    for family in ("estimates.jsonl", "alerts.jsonl"):
        assert theirs.read(family), family
        mine = [record for record in ours.read(family) if record["type"] != "fairness.trigger"]
        assert list(map(anonymous, mine)) == list(map(anonymous, theirs.read(family))), family
    turns, standing = [], False
    for estimate in theirs.read("estimates.jsonl"):
        gaps = [part["gap"] for part in estimate["parts"].values()]
        holds = True if any(gap is not None and gap > 0.1 for gap in gaps) else None if None in gaps else False  # or, as Kleene's logic reads it
        if holds is not None and holds != standing:
            turns.append((estimate["event_time"], "raised" if holds else "cleared"))
            standing = holds
    triggered = [(record["event_time"], record["state"]) for record in ours.read("alerts.jsonl") if record["type"] == "fairness.trigger"]
    assert triggered == turns and turns
    return [record for record in ours.read("alerts.jsonl") if record["type"] != "fairness.trigger"]


def test_the_rtlola_compas_monitor_gives_the_records_of_the_compas_spec(compas_csv, tmp_path):
    """Without an evidence floor, as RTLola judges a group from its first trial: the first alert is the paper's,
    Asian vs Caucasian on 2015-01-10, from 2 Asian trials the prior lifted."""
    short = yaml.safe_load((SPECS / "compas_equalized_odds.yaml").read_text())
    short["estimator"]["min_trials"] = 1
    (tmp_path / "short.yaml").write_text(yaml.safe_dump(short))
    alerts = assert_same_records("rtlola_compas_equalized_odds", tmp_path / "short.yaml", compas_csv, tmp_path)
    first = alerts[0]
    assert (first["event_time"][:10], first["pair"]) == ("2015-01-10", ["Asian", "Caucasian"])


@pytest.mark.parametrize("p_female", [0.2, 0.5])
def test_the_rtlola_hiring_monitor_gives_the_records_of_the_hiring_spec(p_female, tmp_path):
    path = tmp_path / "hiring.jsonl"
    write_jsonl(path, hiring_decisions(600, p_male=0.5, p_female=p_female, seed=3))
    assert_same_records("rtlola_hiring_demographic_parity", "hiring_demographic_parity", path, tmp_path)
