"""The job's operational endpoint: Prometheus metrics at /metrics, a health check at /healthz answering 200 while the
dataflow runs, and /readyz answering 200 once this process's input partitions are assigned and their recovery state
loaded, 503 with the reason before (served from a thread for the duration of the run)."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from fairstream.metrics import REGISTRY
from fairstream.process.readiness import readiness, reset
from fairstream.records.errors import UsageError

log = logging.getLogger("fairstream.metrics")


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        if self.path.split("?")[0] == "/metrics":
            self._answer(200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)
        elif self.path == "/healthz":
            self._answer(200, b"ok\n", "text/plain; charset=utf-8")
        elif self.path == "/readyz":
            ready, why = readiness()
            self._answer(200 if ready else 503, f"{why}\n".encode(), "text/plain; charset=utf-8")
        else:
            self._answer(404, b"not found: try /metrics, /healthz or /readyz\n", "text/plain; charset=utf-8")

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - scrapes are not worth a log line each
        pass


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up before its answer is written is no error of the run's: nothing is said of it. Any other
    failure of a request is one log line, never a traceback on stderr, so no local client can flood the run's log."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: tuple[str, int]) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            return
        log.warning("metrics endpoint: a request from %s failed: %s", client_address[0], error)


@contextmanager
def serving(port: int | None, host: str = "127.0.0.1") -> Iterator[None]:
    """Serve /metrics, /healthz and /readyz on `host`:`port` (none when None) while the block runs."""
    reset()
    if port is None:
        yield
        return
    try:
        server = _QuietServer((host, port), _Handler)
    except OSError as err:
        raise UsageError(f"cannot serve metrics on {host}:{port}: {err.strerror}") from None
    thread = threading.Thread(target=server.serve_forever, name="fairstream-metrics", daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
