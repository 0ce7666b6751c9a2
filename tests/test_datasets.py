"""`fairstream data get`: each reference data set fetched from a real local HTTP server into the cache, kept only when
its sha256 is the known one; German Credit made from UCI's german.data; the tests' lookup (`../shared/data`, then the
cache, else a skip naming the command)."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fairstream.datasets import catalog
from fairstream.datasets.german import WORDS
from tests.helpers import reference_file

KNOWN_SHA256 = {  # the files as published (../shared/data/README.md), not read from the catalog under test
    "compas": "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
    "adult": "a0351ccac2e50adb68d08c54a6ce37daae7714fac1423a7c09577ae0f55934ba",
    "german": "e3efbae6da0f8300991047666ee22f4a133be37f3e4065eabed25d72b080cf68",
}


class Files(BaseHTTPRequestHandler):
    """Serves `self.server.bodies` by path; `/truncated` promises more bytes than it sends."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = self.server.bodies.get(self.path)  # type: ignore[attr-defined]
        if body is None:
            self.send_error(404, "Not Found")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body) * (2 if self.path == "/truncated" else 1)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, dict[str, bytes]]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Files)
    httpd.bodies = {}  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", httpd.bodies  # type: ignore[attr-defined]
    httpd.shutdown()


def data(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "FAIRSTREAM_DATA": str(cache), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "fairstream.cli", "data", *args], capture_output=True, text=True, timeout=120, env=environ)


def uci_german_data(recoded: Path) -> bytes:
    """UCI's german.data as it would read before the recoding: space-separated codes, the male rows' personal status
    drawn among UCI's three male codes (the recoding keeps only the sex)."""
    codes: dict[int, dict[str, list[str]]] = {}
    for column, words in WORDS.items():
        for code, word in words.items():
            codes.setdefault(column, {}).setdefault(word, []).append(code)
    draw = random.Random(3)
    lines = []
    for row in recoded.read_text().splitlines()[1:]:
        values = row.split(",")
        lines.append(" ".join(draw.choice(codes[c][v]) if v in codes.get(c, {}) else v for c, v in enumerate(values)) + " ")
    return ("\r\n".join(lines) + "\r\n").encode()


@pytest.mark.parametrize("name", ["compas", "adult"])
def test_a_published_file_is_fetched_checked_and_kept_once(server, tmp_path, name):
    base, bodies = server
    bodies["/file"] = reference_file(name).read_bytes()
    fetched = data("get", name, "--url", f"{base}/file", cache=tmp_path)
    assert fetched.returncode == 0, fetched.stderr
    kept = tmp_path / catalog.CATALOG[name].file
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == KNOWN_SHA256[name]
    assert f"fetched from {base}/file" in fetched.stdout and fetched.stderr == ""
    del bodies["/file"]  # a second get finds the checked copy and asks nothing
    again = data("get", name, "--url", f"{base}/file", cache=tmp_path)
    assert again.returncode == 0 and "already there" in again.stdout, again.stderr


def test_german_credit_is_made_from_ucis_german_data(server, tmp_path):
    base, bodies = server
    bodies["/german.data"] = uci_german_data(reference_file("german"))
    fetched = data("get", "german", "--url", f"{base}/german.data", cache=tmp_path)
    assert fetched.returncode == 0, fetched.stderr
    assert hashlib.sha256((tmp_path / "german-credit.csv").read_bytes()).hexdigest() == KNOWN_SHA256["german"]


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/changed", "is not the COMPAS file fairstream knows: sha256 "),
        ("/missing", "HTTP 404 Not Found"),
        ("/truncated", "could not fetch"),
    ],
)
def test_a_wrong_or_broken_transfer_keeps_nothing_and_says_why_in_one_line(server, tmp_path, path, said):
    base, bodies = server
    bodies["/changed"] = b"id,name\n1,someone else's file\n"
    bodies["/truncated"] = b"id,compas_screening_date\n1,2013-01-01\n"
    failed = data("get", "compas", "--url", f"{base}{path}", cache=tmp_path)
    assert failed.returncode == 1
    assert failed.stderr.count("\n") == 1 and failed.stderr.startswith("error: ") and said in failed.stderr, failed.stderr
    assert list(tmp_path.iterdir()) == []  # no file, no part


def test_unreachable_source_and_mirror_for_several_are_one_line_each(tmp_path):
    unreachable = data("get", "adult", "--url", "http://127.0.0.1:9/adult.data", cache=tmp_path)
    assert unreachable.returncode == 1 and unreachable.stderr.startswith("error: could not fetch http://127.0.0.1:9/adult.data: ")
    several = data("get", "compas", "german", "--url", "http://127.0.0.1:9/x", cache=tmp_path)
    assert several.returncode == 2 and several.stderr == "error: --url names one file; 2 data sets were asked for (compas, german)\n"


def test_the_lookup_takes_shared_data_then_the_cache_and_else_names_the_command(tmp_path, monkeypatch):
    shared, cache = tmp_path / "shared", tmp_path / "cache"
    shared.mkdir()
    cache.mkdir()
    monkeypatch.setattr(catalog, "SHARED_DATA", shared)
    monkeypatch.setenv("FAIRSTREAM_DATA", str(cache))
    with pytest.raises(pytest.skip.Exception, match=r"`fairstream data get compas` fetches it"):
        reference_file("compas")
    (cache / "compas-scores-two-years.csv").write_text("cached")
    assert reference_file("compas") == cache / "compas-scores-two-years.csv"
    (shared / "compas-scores-two-years.csv").write_text("shared")
    assert reference_file("compas") == shared / "compas-scores-two-years.csv"


def test_the_default_cache_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("FAIRSTREAM_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert catalog.cache_dir() == tmp_path / "fairstream" / "data"
