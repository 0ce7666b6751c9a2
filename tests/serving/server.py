"""A real `fairstream shield serve` process on loopback, for the tests: started, waited for by its /readyz, stopped by
SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

from fairstream.connectors.broker import free_port
from tests.conftest import SPECS

SPEC = str(SPECS / "hiring_energy_shield.yaml")


class Served:
    """A running server: its base URL and process."""

    def __init__(self, process: subprocess.Popen, port: int):
        self.process = process
        self.url = f"http://127.0.0.1:{port}"
        self.port = port

    def post(self, body: bytes, path: str = "/decisions", timeout: float = 30) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path, data=body, method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read()

    def decide(self, decision: dict) -> dict:
        status, body = self.post(json.dumps(decision).encode())
        assert status == 200, body
        return json.loads(body)

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read()


@contextmanager
def serving(*arguments: str, spec: str = SPEC):
    """A shield server of `spec` with `arguments` (`--out DIR` or a Kafka); yields it, then stops it with SIGTERM and
    checks that it exited 0."""
    port = free_port()
    command = [sys.executable, "-m", "fairstream.cli", "shield", "serve", spec, "--port", str(port), *arguments]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    served = Served(process, port)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1].decode()
        try:
            if served.get("/readyz")[0] == 200:
                break
        except OSError:
            time.sleep(0.2)
    try:
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        out, errors = process.communicate(timeout=60)
        served.output = out.decode() + errors.decode()
        served.returncode = process.returncode
