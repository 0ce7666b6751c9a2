"""On Kafka lateness is the contract, and a partition that loses more than 1 % of its records to it is named: German
credit with its dates cycling through January, replayed in file order, gives one live warning line and the summary's
line with the share a pandas computation finds late."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from fairstream.connectors.replay import replay
from tests.helpers import german_decisions
from tests.test_file_order import SPEC

pytestmark = pytest.mark.kafka


def test_a_partition_losing_records_to_lateness_is_named(kafka_bootstrap, topic, tmp_path):
    frame = german_decisions(lambda index: f"2024-01-{index % 31 + 1:02d}")
    frame = frame.assign(id=frame.id.astype(str), approved=frame.approved == 1)
    replay(frame.to_dict("records"), kafka_bootstrap, topic)
    (tmp_path / "spec.yaml").write_text(SPEC)
    result = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "run", str(tmp_path / "spec.yaml"), "--bootstrap", kafka_bootstrap, "--topic", topic,
         "--alerts", f"{topic}-alerts", "--until-end"],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    times = pd.to_datetime(frame["date"])
    late = int((times < times.cummax().shift(fill_value=times.iloc[0])).sum())
    lines = [line for line in result.stderr.splitlines() if line.startswith("warning: input partition 0:")]
    assert len(lines) == 2 and all("input.lateness" in line for line in lines)  # once as it happens, once in the summary
    assert f"{late / len(frame):.1%} of its records ({late:,} of {len(frame):,})" in lines[-1]
    assert f"dead letters: {late} (late: {late})" in result.stdout
