"""Through Kafka the plain engine writes the records bytewax writes: COMPAS replayed into two partitions, read to the
end by `fairstream run` on each engine, gives the same alerts and estimates on each engine's topics."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fairstream.connectors.alerts import subscribe
from fairstream.connectors.compas import compas_events
from fairstream.connectors.replay import EventFields, replay

pytestmark = pytest.mark.kafka


def test_compas_through_kafka_gives_the_same_records_on_both_engines(kafka_bootstrap, topic, compas_csv):
    pytest.importorskip("bytewax", reason="bytewax, the reference engine, installs on Python 3.11 and 3.12")
    replay(compas_events(compas_csv), kafka_bootstrap, topic, fields=EventFields("id", "date"), partitions=2)
    written = {}
    for engine in ("bytewax", "plain"):
        alerts = f"{topic}-{engine}"
        command = [sys.executable, "-m", "fairstream.cli", "run", "compas_equalized_odds", "--bootstrap", kafka_bootstrap, "--topic", topic, "--alerts", alerts, "--until-end"]
        run = subprocess.run(command, env={**os.environ, "FAIRSTREAM_ENGINE": engine}, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"{engine}: {run.stderr}"
        written[engine] = {name: [{k: v for k, v in record.items() if k != "emitted_at"} for record in subscribe(kafka_bootstrap, name, distinct=False)] for name in (alerts, f"{alerts}.estimates")}
    plain, reference = list(written["plain"].values()), list(written["bytewax"].values())
    assert plain == reference
    assert len(plain[1]) > 500 and plain[0]
