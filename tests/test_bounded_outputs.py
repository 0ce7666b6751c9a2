"""Outputs and memory stay bounded however much a run writes: the dead-letter file stops at
`dead_letters.max_file_bytes` (later dead letters are counted, in the summary and the metrics, not written), and a run's
peak memory does not grow with what it writes (100,000 dead letters under 300 MB; 10,000 group names under 500 MB)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from fairstream.connectors.compas import compas_events
from fairstream.connectors.files import write_jsonl

BAD_RECORDS = 100_000


MEASURE = (
    "import resource, subprocess, sys; "
    "code = subprocess.run([sys.executable, '-m', 'fairstream.cli', 'run', *sys.argv[2:]]).returncode; "
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(code)"
)
"""Runs `fairstream run` as the only child of a small process that then writes the child's peak resident memory (KiB)."""


def run_measured(*args: str, scratch: Path) -> tuple[subprocess.CompletedProcess, float]:
    """Run the CLI; its result and its peak resident memory in MB."""
    result = subprocess.run([sys.executable, "-c", MEASURE, str(scratch / "peak"), *args], capture_output=True, text=True, timeout=600)
    return result, int((scratch / "peak").read_text()) / 1024


def test_the_dead_letter_file_stops_at_its_cap_and_the_rest_are_counted(tmp_path: Path, specs_dir: Path):
    (tmp_path / "bad.jsonl").write_bytes(b"".join(b"not json %d\n" % index for index in range(BAD_RECORDS)))
    spec = (specs_dir / "hiring_demographic_parity.yaml").read_text() + "dead_letters:\n  max_file_bytes: 1000000\n"
    (tmp_path / "spec.yaml").write_text(spec)
    result, _ = run_measured(str(tmp_path / "spec.yaml"), "--input", str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "out"), "--allow-empty", scratch=tmp_path)
    assert result.returncode == 0, result.stderr
    letters = (tmp_path / "out" / "dead_letters.jsonl").read_bytes()
    written = letters.count(b"\n")
    assert len(letters) <= 1_000_000 and 0 < written < BAD_RECORDS
    assert {orjson.loads(line)["reason"] for line in letters.splitlines()} == {"not_json"}
    assert f"dead letters: {BAD_RECORDS} (not_json: {BAD_RECORDS}); {BAD_RECORDS - written:,} past dead_letters.max_file_bytes counted, not written" in result.stdout
    assert result.stderr.count("reached dead_letters.max_file_bytes (1,000,000)") == 1


def test_a_run_of_100000_dead_letters_peaks_under_300_mb(tmp_path: Path):
    (tmp_path / "bad.jsonl").write_bytes(b"".join(b'{"id": %d, "event": "SCREEN", "date": "someday"}\n' % index for index in range(BAD_RECORDS)))
    result, peak = run_measured("compas_equalized_odds", "--input", str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "out"), "--allow-empty", scratch=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "dead_letters.jsonl").read_bytes().count(b"\n") == BAD_RECORDS
    assert peak < 300, f"peak {peak:.0f} MB"


def test_a_run_of_10000_group_names_peaks_under_500_mb(tmp_path: Path, compas_csv: Path):
    events = [{**event, "race": f"group-{index % 10_000}"} if event["event"] == "SCREEN" else event for index, event in enumerate(compas_events(compas_csv) * 2)]
    events = [{**event, "id": f"{event['id']}-{index // 10685}"} for index, event in enumerate(events)]
    events.sort(key=lambda event: event["date"])
    write_jsonl(tmp_path / "groups.jsonl", events)
    result, peak = run_measured("compas_equalized_odds", "--input", str(tmp_path / "groups.jsonl"), "--out", str(tmp_path / "out"), scratch=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "metric.max_groups" in result.stderr  # groups past the budget are counted, not tracked
    assert peak < 500, f"peak {peak:.0f} MB"
