"""A run whose trials never close is not an empty input: it exits 0, says how many trials are still open, and its
evicted and unfinished trials are published in an estimate record."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import orjson
from click.testing import CliRunner

from fairstream.cli import cli

SPEC = """
monitor: never-closing
input:
  time: time
  time_format: iso
  key: id
  kind: event
  kinds:
    APPLY: {gender: str}
    DECISION: {hired: bool}
trial:
  opens_on: [APPLY]
  close_on: [DECISION]
  max_open: 500
variables:
  group: {first: APPLY, field: gender}
  hired: {first: DECISION, field: hired}
metric:
  type: demographic_parity
  group: group
  prediction: hired
  threshold: 0.1
evaluate:
  every: 1d
"""
APPLICATIONS = 3000


def test_trials_that_never_close_are_reported_open_and_their_evictions_published(tmp_path: Path):
    (tmp_path / "spec.yaml").write_text(SPEC)
    start = datetime(2020, 1, 1)
    lines = [
        orjson.dumps({"id": index, "time": (start + timedelta(minutes=index)).isoformat(), "event": "APPLY", "gender": "mf"[index % 2]})
        for index in range(APPLICATIONS)
    ]
    (tmp_path / "in.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "spec.yaml"), "--input", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "out")], env={"NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    evicted, still_open = APPLICATIONS - 500, 500  # at most max_open open: the first 500 are kept, the newest are not
    assert f"warning: not kept: {evicted:,} of {APPLICATIONS:,} trial(s) (83.3%) opened while trial.max_open trials were open" in result.stderr
    assert f"warning: {still_open:,} trial(s) still open at the end of the input" in result.stderr
    assert "no record" not in result.output and "error" not in result.output
    (record,) = [orjson.loads(line) for line in (tmp_path / "out" / "estimates.jsonl").read_bytes().splitlines()]
    assert record["trials"] == {"closed": 0, "incomplete": 0, "evicted": evicted, "unfinished": still_open}
    last = start + timedelta(minutes=APPLICATIONS - 1)
    assert record["event_time"] == f"{last.date()}T00:00:00Z"  # the last daily tick the input reached
