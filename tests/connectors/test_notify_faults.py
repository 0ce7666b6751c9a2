"""Notification endpoints that fail: one that answers something other than HTTP, one that sleeps through every
request, one nobody listens on. The notifier survives each (a webhook that answers again gets the later alerts), names
each failing endpoint in one line, and every alert is either accepted by the endpoint or written down in
`undelivered.jsonl` beside the outputs, counted in the summary and the metrics: none is lost."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from fairstream import metrics
from fairstream.cli import cli
from fairstream.connectors.broker import free_ports
from fairstream.connectors.files import write_jsonl
from fairstream.connectors.synthetic.hiring import hiring_decisions

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


class Endpoint:
    """A TCP server on loopback that reads each request and answers it by `mode`: `garbage` (a line that is not HTTP),
    `sleep` (nothing, for 30 s), or `ok` (HTTP 200, keeping the JSON body); `garbage_for` names alerts whose posts are
    answered with garbage however often they are tried, so what fails does not hang on how fast the machine is."""

    def __init__(self, mode: str, garbage_for: frozenset[str] = frozenset()):
        self.mode, self.garbage_for = mode, garbage_for
        self.bodies: list[dict] = []
        self.requests = 0
        self._server = socket.create_server(("127.0.0.1", free_ports(1)[0]))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/hook/secret-token"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            head, body = request.split(b"\r\n\r\n", 1)
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
            while len(body) < length:
                body += connection.recv(65536)
            self.requests += 1
            if self.mode == "sleep":
                time.sleep(30)
            elif self.mode == "garbage" or json.loads(body).get("alert_id") in self.garbage_for:
                connection.sendall(b"SPAM SPAM SPAM\r\n\r\n")
            else:
                self.bodies.append(json.loads(body))
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def close(self) -> None:
        self._server.close()


@pytest.fixture
def flapping(tmp_path: Path) -> Path:
    """Hiring decisions whose gap is wide, then closes: violations and recoveries alternate (20 alerts)."""
    early = hiring_decisions(300, p_male=0.7, p_female=0.2, seed=3)
    late = hiring_decisions(4000, p_male=0.5, p_female=0.5, seed=4, start=datetime(2024, 1, 2))
    path = tmp_path / "flapping.jsonl"
    write_jsonl(path, [*early, *({**event, "id": f"late-{event['id']}"} for event in late)])
    return path


@pytest.fixture
def endpoint() -> Iterator[type[Endpoint]]:
    """Starts endpoints (`endpoint(mode)`), closed after the test."""
    started: list[Endpoint] = []

    def start(mode: str, garbage_for: frozenset[str] = frozenset()) -> Endpoint:
        started.append(Endpoint(mode, garbage_for))
        return started[-1]

    yield start  # type: ignore[misc]
    for found in started:
        found.close()


def run(data: Path, out: Path, *targets: str):
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["run", "hiring_demographic_parity", "--input", str(data), "--out", str(out), *targets], env=ENV)
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result, time.monotonic() - started


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_webhook_answering_garbage_then_http_gets_every_alert_or_writes_it_down(flapping, endpoint, tmp_path):
    run(flapping, tmp_path / "plain")
    first_three = frozenset(alert["alert_id"] for alert in read(tmp_path / "plain" / "alerts.jsonl")[:3])
    hook = endpoint("ok", garbage_for=first_three)  # the first post is retried, the next two tried once: each fails
    result, _ = run(flapping, tmp_path / "out", "--webhook", hook.url)
    alerts = read(tmp_path / "out" / "alerts.jsonl")
    undelivered = read(tmp_path / "out" / "undelivered.jsonl")
    assert len(alerts) == 20 and {record["alert_id"] for record in undelivered} == first_three
    assert sorted([body["alert_id"] for body in hook.bodies] + [record["alert_id"] for record in undelivered]) == sorted(alert["alert_id"] for alert in alerts)
    assert {record["record"]["alert_id"] for record in undelivered} == {record["alert_id"] for record in undelivered}
    schema = json.loads((Path(__file__).parents[2] / "pipeline" / "records" / "schemas" / "undelivered.schema.json").read_text())
    for record in undelivered:
        Draft202012Validator(schema).validate(record)
    assert all(record["endpoint"] == f"http://127.0.0.1:{hook.url.split(':')[2].split('/')[0]}/…" for record in undelivered)
    failing = [line for line in result.stderr.splitlines() if "notifications to webhook" in line and " fail: " in line]
    assert len(failing) == 1 and "BadStatusLine" in failing[0] and "secret-token" not in result.output
    assert "notifications: 17 post(s) accepted, 3 failed; 3 alert(s) never accepted, written to" in result.stderr


def test_an_alertmanager_answering_garbage_costs_no_alert(flapping, endpoint, tmp_path):
    manager = endpoint("garbage")
    undelivered_before = metrics.NOTIFICATIONS_UNDELIVERED.labels("alertmanager")._value.get()
    result, seconds = run(flapping, tmp_path / "out", "--alertmanager", manager.url.removesuffix("/hook/secret-token"))
    undelivered = read(tmp_path / "out" / "undelivered.jsonl")
    alerts = read(tmp_path / "out" / "alerts.jsonl")
    # Alertmanager keeps one alert per label set, a violation's pair: the last state of each is what is left to deliver
    assert {record["record"]["alert_id"] for record in undelivered} <= {alert["alert_id"] for alert in alerts}
    assert len(undelivered) == len({tuple(alert["pair"]) for alert in alerts if alert["type"] == "fairness.violation"}) == 2
    assert all(record["record"]["type"] == "fairness.recovered" for record in undelivered)
    assert metrics.NOTIFICATIONS_UNDELIVERED.labels("alertmanager")._value.get() - undelivered_before == len(undelivered)
    assert sum(" fail: " in line for line in result.stderr.splitlines()) == 1 and manager.requests >= 1
    assert seconds < 60


def test_an_endpoint_that_sleeps_costs_a_bounded_wait_and_writes_every_alert_down(flapping, endpoint, tmp_path):
    sleeper = endpoint("sleep")
    result, seconds = run(flapping, tmp_path / "out", "--webhook", sleeper.url)
    alerts = read(tmp_path / "out" / "alerts.jsonl")
    undelivered = read(tmp_path / "out" / "undelivered.jsonl")
    assert sorted(record["alert_id"] for record in undelivered) == sorted(alert["alert_id"] for alert in alerts)
    assert {record["reason"] for record in undelivered} >= {"not accepted when the run ended (no answer within 5 s)"}
    assert "notifications: 0 post(s) accepted" in result.stderr and "20 alert(s) never accepted" in result.stderr
    assert seconds < 40


def test_an_endpoint_nobody_listens_on_is_named_once(flapping, tmp_path):
    (port,) = free_ports(1)
    result, seconds = run(flapping, tmp_path / "out", "--webhook", f"http://127.0.0.1:{port}/")
    lines = [line for line in result.stderr.splitlines() if f"127.0.0.1:{port}" in line]
    assert len(lines) == 1 and "Connection refused" in lines[0]
    assert len(read(tmp_path / "out" / "undelivered.jsonl")) == 20 and seconds < 60
