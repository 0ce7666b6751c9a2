"""`fairstream run` on the COMPAS file: exit codes, the final table and the first violations, checked against a pandas computation."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fairstream.cli import cli
from tests.test_compas_reference import (
    CONFIDENCE,
    CUTS,
    PAIR,
    PARTS,
    compas_trials,
    expected_evaluations,
    final_counts,
    map_estimate,
    restrict_to_pair,
    write_variant,
)

SPEC = "compas_equalized_odds.yaml"
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}


def invoke(*args: str):
    return CliRunner().invoke(cli, ["run", *args], env=ENV)


def table_rows(output: str) -> list[list[str]]:
    """The cells of every table row in the output."""
    return [[cell.strip() for cell in line.split("│")] for line in output.splitlines() if "│" in line]


@pytest.fixture(scope="module")
def trials(compas_csv: Path):
    return compas_trials(compas_csv, CUTS[SPEC])


@pytest.fixture(scope="module")
def result(specs_dir: Path, compas_csv: Path, tmp_path_factory):
    return invoke(str(specs_dir / SPEC), "--input", str(compas_csv), "--out", str(tmp_path_factory.mktemp("cli") / "out"))


def test_run_succeeds_and_names_the_final_evaluation(result, trials):
    assert result.exit_code == 0, result.output + repr(result.exception)
    lines = result.stdout.splitlines()
    last = trials["closes"].max().strftime("%Y-%m-%dT%H:%M:%SZ")
    assert lines[0].rstrip() == f"Final rates at {last} (MAP: prior 0.5, κ = {float(CONFIDENCE)})"
    assert f"closed trials: {len(trials)}, incomplete: 0" in lines
    assert result.stderr == ""
    assert lines[-1].startswith("wrote alerts.jsonl, estimates.jsonl, seals.jsonl to ")  # COMPAS has no bad record: no dead-letter file


def test_final_table_rows_carry_the_independent_counts(result, trials):
    rows = table_rows(result.stdout)
    counts = final_counts(trials)
    for part in PARTS:
        for group in PAIR:
            hits, n = counts[part][group]
            assert [part, group, f"{hits / n:.4f}", f"{map_estimate(hits, n):.4f}", str(hits), str(n)] in rows


def test_every_parts_gap_is_printed_raw_first_with_the_map_gap_beside(result, trials):
    """One row per part, violated or not: the pair, the gap of the raw rates and of the MAP estimates (pandas counts)."""
    counts = final_counts(trials)
    rows = {row[0]: row for row in table_rows(result.stdout) if len(row) == 7 and row[-1] in ("violated", "satisfied", "inconclusive")}
    assert sorted(rows) == sorted(PARTS)
    for part in PARTS:
        _part, high, low, raw, estimated, threshold, status = rows[part]
        (hits_high, n_high), (hits_low, n_low) = counts[part][high], counts[part][low]
        assert raw == f"{hits_high / n_high - hits_low / n_low:.4f}"
        assert estimated == f"{map_estimate(hits_high, n_high) - map_estimate(hits_low, n_low):.4f}"
        assert (threshold, status) == ("0.1000", "violated" if float(estimated) > 0.1 else "satisfied")


def test_first_violation_of_each_part_is_the_batch_computations(specs_dir: Path, compas_csv: Path, tmp_path: Path, trials):
    """Restricted to the pair, the first violations the summary prints are the days a pandas computation finds first
    a gap above the threshold, with that gap."""
    spec = write_variant(specs_dir / SPEC, tmp_path / "pair.yaml", restrict_to_pair)
    result = invoke(str(spec), "--input", str(compas_csv), "--out", str(tmp_path / "out"))
    evaluations = expected_evaluations(trials, PAIR)
    for part in PARTS:
        first = next(e for e in evaluations if e["parts"][part]["gap"] is not None and e["parts"][part]["gap"] > 0.1)
        body = first["parts"][part]
        assert [part, *body["pair"], first["event_time"][:10], f"{body['gap']:.4f}"] in table_rows(result.stdout)


def test_missing_input_file_is_one_line_and_exit_code_1(specs_dir: Path, tmp_path: Path):
    missing = tmp_path / "missing.jsonl"
    result = invoke(str(specs_dir / SPEC), "--input", str(missing), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert result.stderr == f"error: input file not found: {missing}\n"
    assert result.stdout == ""


def test_bad_spec_is_exit_code_2_and_names_the_field(specs_dir: Path, compas_csv: Path, tmp_path: Path):
    spec = write_variant(specs_dir / SPEC, tmp_path / "bad.yaml", lambda body: body["metric"].update(threshold=1.5))
    result = invoke(str(spec), "--input", str(compas_csv), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {spec}: metric -> threshold: ")
    assert result.stderr.rstrip("\n").endswith("got 1.5") and result.stderr.count("\n") == 1
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()


def test_a_run_that_accepts_no_record_fails_with_the_dead_letter_counts(compas_csv: Path, tmp_path: Path):
    """The COMPAS CSV read as JSON lines (a wrong --format): every line a not_json dead letter, exit 1, unless --allow-empty."""
    result = invoke("compas_equalized_odds", "--input", str(compas_csv), "--format", "jsonl", "--out", str(tmp_path / "out"))
    lines = sum(1 for _ in compas_csv.open())
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: no record was accepted: {lines:,} dead letter(s) (not_json: {lines:,}); the first not_json: ")
    assert result.stderr.endswith("(spec: --format (a CSV file is read as JSON lines?)); pass --allow-empty if that is expected\n")
    assert result.stderr.count("\n") == 1
    allowed = invoke("compas_equalized_odds", "--input", str(compas_csv), "--format", "jsonl", "--out", str(tmp_path / "out"), "--allow-empty")
    assert allowed.exit_code == 0


def test_an_empty_input_fails_unless_allowed(tmp_path: Path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = invoke("compas_equalized_odds", "--input", str(empty), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1 and result.stderr == "error: the input held no record to monitor; pass --allow-empty if that is expected\n"
    assert invoke("compas_equalized_odds", "--input", str(empty), "--out", str(tmp_path / "out"), "--allow-empty").exit_code == 0


def test_an_unwritable_output_directory_is_one_line_and_exit_code_1(compas_csv: Path, tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = invoke("compas_equalized_odds", "--input", str(compas_csv), "--out", str(blocker / "out"))
    assert result.exit_code == 1
    assert result.stderr == f"error: cannot write to the output directory {blocker / 'out'}: Not a directory\n" and result.stdout == ""


def test_a_file_and_a_kafka_together_are_a_usage_error(compas_csv: Path, tmp_path: Path):
    result = invoke("compas_equalized_odds", "--input", str(compas_csv), "--bootstrap", "127.0.0.1:9092")
    assert result.exit_code == 2
    assert result.stderr == "error: give --input FILE or a Kafka (--bootstrap, --kafka-config), not both\n"
