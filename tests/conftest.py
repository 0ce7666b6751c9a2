"""Shared fixtures: paths to the reference data sets (`../shared/data`, then the cache) and to the bundled specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairstream.engine.api import ENGINE
from fairstream.paths import SPECS_DIR as SPECS

needs_bytewax = pytest.mark.skipif(ENGINE == "plain", reason="several processes and recovery stores need bytewax, which installs on Python 3.11 and 3.12")
"""A test of what only bytewax does: skipped on the plain engine (Python 3.13, or `FAIRSTREAM_ENGINE=plain`)."""


@pytest.fixture(scope="session")
def compas_csv() -> Path:
    from tests.helpers import reference_file

    return reference_file("compas")


@pytest.fixture(scope="session")
def specs_dir() -> Path:
    return SPECS


def _docker_answers() -> bool:
    import shutil
    import subprocess

    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def kafka_bootstrap():
    """A real Kafka-protocol broker: $KAFKA_BOOTSTRAP, else testcontainers Kafka where a Docker engine answers, else a local tansu process."""
    import os

    if os.environ.get("KAFKA_BOOTSTRAP"):
        yield os.environ["KAFKA_BOOTSTRAP"]
        return
    if _docker_answers():
        try:
            from testcontainers.kafka import KafkaContainer
        except ImportError:
            pass
        else:
            with KafkaContainer() as container:
                yield container.get_bootstrap_server()
            return
    from fairstream.connectors.broker import LocalBroker

    with LocalBroker() as broker:
        yield broker.bootstrap


@pytest.fixture
def topic(request) -> str:
    """A topic name of its own for each test."""
    import re
    import uuid

    return f"{re.sub(r'[^A-Za-z0-9]+', '-', request.node.name)[:40]}-{uuid.uuid4().hex[:8]}"
