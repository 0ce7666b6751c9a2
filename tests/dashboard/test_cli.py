"""`fairstream dashboard`'s one-line errors and exit codes: a source named twice or not at all, a port in use."""

from __future__ import annotations

import os
import socket
import subprocess
import sys


def dashboard(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairstream.cli", "dashboard", *args], capture_output=True, text=True, timeout=60)


def test_a_directory_and_a_kafka_together_or_neither_is_a_usage_error(tmp_path):
    both = dashboard(str(tmp_path), "--bootstrap", "127.0.0.1:9092")
    assert (both.returncode, both.stderr) == (2, "error: give an output DIR or a Kafka (--bootstrap, --kafka-config), not both\n")
    neither = subprocess.run(
        [sys.executable, "-m", "fairstream.cli", "dashboard"], capture_output=True, text=True, timeout=60,
        env={key: value for key, value in os.environ.items() if not key.startswith("FAIRSTREAM_KAFKA_")},
    )  # fmt: skip
    assert (neither.returncode, neither.stderr) == (2, "error: give an output DIR, or a Kafka: --bootstrap HOST:PORT, --kafka-config FILE or FAIRSTREAM_KAFKA_BOOTSTRAP\n")


def test_a_port_in_use_is_one_line_and_exit_code_1(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = dashboard(str(tmp_path), "--port", str(port))
    assert result.returncode == 1
    assert result.stderr == f"error: cannot serve on 127.0.0.1:{port}: Address already in use\n" and result.stdout == ""
