"""`fairstream shield serve`: a real HTTP server on loopback answers each decision with its shielded record, writes the
records `fairstream shield run` writes for the same decisions, refuses bad input with 4xx and a reason (its dead letter
written), and keeps answering through client hang-ups, slowloris connections and 200 concurrent clients."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from fairstream.connectors.synthetic.hiring import hiring_decisions
from tests.serving.server import SPEC, serving


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def without_emitted_at(records):
    return [{key: value for key, value in record.items() if key != "emitted_at"} for record in records]


def test_served_decisions_are_answered_and_recorded_as_shield_run_records_them(tmp_path):
    decisions = hiring_decisions(300, p_male=0.6, p_female=0.3, seed=7)
    with serving("--out", str(tmp_path / "served")) as server:
        answers = [server.decide(decision) for decision in decisions]
    assert server.returncode == 0, server.output
    assert "shielded 300 decisions" in server.output
    (tmp_path / "decisions.jsonl").write_text("".join(json.dumps(d) + "\n" for d in decisions))
    run = [sys.executable, "-m", "fairstream.cli", "shield", "run", SPEC, "--input", str(tmp_path / "decisions.jsonl"), "--out", str(tmp_path / "run")]
    assert subprocess.run(run, capture_output=True, timeout=300).returncode == 0
    assert answers == lines(tmp_path / "run" / "decisions_shielded.jsonl") == lines(tmp_path / "served" / "decisions_shielded.jsonl")
    assert sum(answer["fairstream_shield"]["flipped"] for answer in answers) > 10
    for name in ("alerts.jsonl", "estimates.jsonl", "seals.jsonl"):
        assert without_emitted_at(lines(tmp_path / "served" / name)) == without_emitted_at(lines(tmp_path / "run" / name)), name
    verify = subprocess.run([sys.executable, "-m", "fairstream.cli", "verify", str(tmp_path / "served")], capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_bad_requests_are_refused_with_a_reason_and_dead_lettered(tmp_path):
    decision = hiring_decisions(1, p_male=0.5, p_female=0.5, seed=1)[0]
    with serving("--out", str(tmp_path / "out")) as server:
        refused = {
            "not_json": server.post(b"{not json"),
            "not_finite": server.post(json.dumps(decision).replace("true", "NaN").replace("false", "NaN").encode()),
            "null_field": server.post(json.dumps({**decision, "gender": None}).encode()),
            "missing_field": server.post(json.dumps({key: value for key, value in decision.items() if key != "id"}).encode()),
            "record_too_large": server.post(json.dumps({**decision, "note": "x" * 300_000}).encode()),
        }
        assert server.get("/decisions")[0] == 405 and server.get("/nowhere")[0] == 404
        assert server.get("/healthz")[0] == 200
        assert server.decide(decision)["id"] == decision["id"]  # still answering
        metrics = server.get("/metrics")[1].decode()
    for reason, (status, body) in refused.items():
        assert status == (413 if reason == "record_too_large" else 400), (reason, body)
        assert json.loads(body)["reason"] == reason
    assert 'fairstream_dead_letters_total{reason="not_finite"} 1.0' in metrics
    assert 'fairstream_shield_decisions_total{arrival="on_time",monitor="hiring-energy-shield"} 1.0' in metrics
    letters = lines(tmp_path / "out" / "dead_letters.jsonl")
    assert [letter["reason"] for letter in letters] == list(refused)
    assert all(len(letter["record"]) < 2200 for letter in letters)


def _slowloris(url_port: int) -> socket.socket:
    """A connection that sends half a request's headers and then nothing."""
    connection = socket.create_connection(("127.0.0.1", url_port))
    connection.sendall(b"POST /decisions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nX-Slow: ")
    return connection


def _hang_up(url_port: int) -> None:
    """A request that sends half its body and hangs up."""
    with socket.create_connection(("127.0.0.1", url_port)) as connection:
        connection.sendall(b'POST /decisions HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{"event": "DECISION", "id": "hang')


def test_hang_ups_slow_clients_and_200_concurrent_clients_are_all_served(tmp_path):
    decisions = hiring_decisions(1000, p_male=0.6, p_female=0.3, seed=8)
    with serving("--out", str(tmp_path / "out")) as server:
        slow = [_slowloris(server.port) for _ in range(200)]
        for _ in range(50):
            _hang_up(server.port)
        slow_body = socket.create_connection(("127.0.0.1", server.port))
        slow_body.sendall(b"POST /decisions HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{")
        started = time.monotonic()

        def client(index: int) -> list[int]:
            return [server.post(json.dumps(decision).encode())[0] for decision in decisions[index::200]]

        with ThreadPoolExecutor(200) as pool:
            statuses = [status for batch in pool.map(client, range(200)) for status in batch]
        served_in = time.monotonic() - started
        timed_out = slow_body.recv(4096)
        for connection in [*slow, slow_body]:
            connection.close()
        assert server.get("/healthz")[0] == 200
    assert statuses == [200] * 1000, sorted(set(statuses))
    assert served_in < 60
    assert b" 408 " in timed_out.split(b"\r\n")[0]  # the slow body was refused after 10 s, the others served meanwhile
    shielded = lines(tmp_path / "out" / "decisions_shielded.jsonl")
    assert sorted(record["id"] for record in shielded) == sorted(d["id"] for d in decisions)
    closing = lines(tmp_path / "out" / "estimates.jsonl")[-1]
    assert closing["decisions"] == 1000
    assert server.returncode == 0


def test_the_shields_page_shows_what_the_server_answers(tmp_path):
    """The page's curl example, posted to a real server, gets the answer the page shows."""
    from tests.docs.markdown import ROOT, blocks

    page = (ROOT / "docs" / "shields.md").read_text()
    (example,) = [block for block in blocks(page, "bash") if "shield serve" in block]
    serve, curl = example.strip().splitlines()
    assert serve.split()[1:4] == ["shield", "serve", "hiring_energy_shield"]
    sent = curl.split(" -d '", 1)[1].rstrip("'")
    (shown,) = [json.loads(block) for block in blocks(page, "json") if '"fairstream_shield"' in block]
    with serving("--out", str(tmp_path / "out")) as server:
        assert server.decide(json.loads(sent)) == shown
