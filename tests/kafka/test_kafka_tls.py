"""Kafka over TLS: replay, monitor and alerts reach a broker only TLS clients can talk to, with the settings from a
properties file or from FAIRSTREAM_KAFKA_* variables, and give the file path's alerts; a plaintext client and an
untrusted certificate are each one clear line and exit 1 within 15 s."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import orjson
import pytest
import trustme

from fairstream.runner import run_file
from tests.conftest import SPECS
from tests.kafka.outputs import without_emitted_at
from tests.kafka.tls import TlsBroker

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    with TlsBroker(tmp_path_factory.mktemp("tls")) as broker:
        yield broker


def fairstream(*args: str, env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    environ = {name: value for name, value in os.environ.items() if not name.startswith("FAIRSTREAM_KAFKA_")}
    return subprocess.run([sys.executable, "-m", "fairstream.cli", *args], capture_output=True, text=True, timeout=timeout, env={**environ, **(env or {})})


def test_replay_monitor_and_alerts_over_tls_give_the_file_paths_alerts(tls, compas_csv, tmp_path):
    settings = tmp_path / "client.properties"
    settings.write_text(f"# the broker's TLS listener\nbootstrap.servers={tls.bootstrap}\nsecurity.protocol=SSL\nssl.ca.location={tls.ca_path}\n")
    config = ["--kafka-config", str(settings)]
    replayed = fairstream("replay", str(compas_csv), *config, "--topic", "tls-decisions", "--partitions", "2")
    assert replayed.returncode == 0, replayed.stderr
    monitored = fairstream("run", "compas_equalized_odds", *config, "--topic", "tls-decisions", "--alerts", "tls-alerts", "--until-end")
    assert monitored.returncode == 0, monitored.stderr
    through_env = fairstream(
        "alerts", "--topic", "tls-alerts", "--json",
        env={"FAIRSTREAM_KAFKA_BOOTSTRAP": tls.bootstrap, "FAIRSTREAM_KAFKA_SECURITY_PROTOCOL": "SSL", "FAIRSTREAM_KAFKA_SSL_CA_LOCATION": str(tls.ca_path)},
    )  # fmt: skip
    assert through_env.returncode == 0, through_env.stderr
    alerts = [orjson.loads(line) for line in through_env.stdout.splitlines()]

    expected = run_file(SPECS / "compas_equalized_odds.yaml", compas_csv, tmp_path / "file").read("alerts.jsonl")
    assert len(expected) == 2 and without_emitted_at(alerts) == without_emitted_at(expected)


def refused(result: subprocess.CompletedProcess, seconds: float) -> str:
    assert result.returncode == 1 and result.stdout == "", result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach Kafka at "), result.stderr
    assert seconds < 15
    return lines[0]


def test_a_plaintext_client_is_refused_in_one_line(tls):
    started = time.monotonic()
    result = fairstream("alerts", "--bootstrap", tls.bootstrap, "--topic", "tls-alerts")
    assert "security.protocol" in refused(result, time.monotonic() - started)


def test_an_untrusted_certificate_is_named_in_one_line(tls, tmp_path):
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    started = time.monotonic()
    result = fairstream(
        "run", "compas_equalized_odds", "--until-end", "--topic", "tls-decisions",
        env={"FAIRSTREAM_KAFKA_BOOTSTRAP": tls.bootstrap, "FAIRSTREAM_KAFKA_SECURITY_PROTOCOL": "SSL", "FAIRSTREAM_KAFKA_SSL_CA_LOCATION": str(other)},
    )  # fmt: skip
    assert "certificate verify failed" in refused(result, time.monotonic() - started)
