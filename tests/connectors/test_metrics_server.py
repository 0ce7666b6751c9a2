"""The metrics endpoint listens on loopback unless told otherwise (it has no authentication); /readyz says 503 with the
reason until every input partition of the process is built and read."""

from __future__ import annotations

import socket
import struct
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from fairstream.connectors.broker import free_port
from fairstream.connectors.metrics_server import serving
from fairstream.process import readiness

PROC_TCP = Path("/proc/net/tcp")


def listening_address(port: int) -> str:
    """The local IPv4 address a socket listening on `port` is bound to, read from the kernel's table."""
    for line in PROC_TCP.read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:
            return ".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0))
    raise AssertionError(f"nothing listens on port {port}")


@pytest.mark.skipif(not PROC_TCP.exists(), reason="needs Linux's /proc/net/tcp")
@pytest.mark.parametrize(("host", "bound"), [(None, "127.0.0.1"), ("0.0.0.0", "0.0.0.0")], ids=["default", "exposed"])
def test_the_endpoint_binds_loopback_by_default(host, bound):
    port = free_port()
    with serving(port, *([host] if host else [])):
        assert listening_address(port) == bound
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            assert answer.read() == b"ok\n"


def ready_answer(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_ready_once_every_partition_is_built_and_read():
    port = free_port()
    with serving(port):
        assert ready_answer(port) == (503, "no input partition assigned yet\n")
        readiness.built("0-decisions")
        readiness.built("1-decisions")
        readiness.first_read("1-decisions")
        assert ready_answer(port) == (503, "1 of 2 input partition(s) not read yet (first: 0-decisions)\n")
        readiness.first_read("0-decisions")
        assert ready_answer(port) == (200, "ready: 2 input partition(s) assigned and read\n")
    with serving(port):  # a new run starts unready
        assert ready_answer(port)[0] == 503


def test_clients_that_hang_up_leave_nothing_on_stderr(capfd):
    """200 clients ask for /metrics and reset the connection at once (SO_LINGER 0): the server writes nothing."""
    port = free_port()
    with serving(port):
        for _ in range(200):
            client = socket.create_connection(("127.0.0.1", port), timeout=5)
            client.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            assert answer.read() == b"ok\n"
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
