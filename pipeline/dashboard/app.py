"""The dashboard's web app: the page and its script from the installed package, plotly.js from the installed plotly
package (no CDN: the page works offline), a JSON snapshot, a server-sent event stream that pushes a new snapshot
whenever records arrive, and each alert's JSON."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from fairstream.dashboard.health import scrape
from fairstream.dashboard.sources import RecordSource
from fairstream.dashboard.state import DashboardState

log = logging.getLogger("fairstream.dashboard")

STATIC = {"dashboard.js": "text/javascript", "dashboard.css": "text/css"}
PUSH_SECONDS = 0.5
"""How often a connected page is sent a new snapshot at most (when anything changed)."""
KEEP_ALIVE_SECONDS = 15.0


@dataclass
class Feed:
    """The source, the state it fills, and the job's metrics: polled by the app's background task."""

    source: RecordSource
    metrics_url: str | None = None
    max_points: int = 1500
    poll_seconds: float = 0.5
    state: DashboardState = field(default_factory=DashboardState)
    health: dict[str, Any] | None = None
    health_error: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Polling runs in a worker thread; snapshots are taken on the event loop."""
    stopping: bool = False
    """Set when the server is asked to exit: open event streams end, so the server need not cut them off."""
    _encoded: tuple[int, bytes] = (-1, b"")

    def poll(self) -> None:
        """Read what arrived; say on stderr, once, when the source starts or stops failing."""
        records, error = self.source.poll()
        health, health_error = scrape(self.metrics_url) if self.metrics_url else (None, None)
        with self.lock:
            self._take(records, error, health, health_error)

    def _take(self, records: list[dict[str, Any]], error: str | None, health: dict[str, Any] | None, health_error: str | None) -> None:
        self.state.add(records)
        if error != self.state.error:
            if error:
                log.error("%s", error)
            elif self.state.error:
                log.warning("reading %s again", self.source.describe())
        self.state.set_error(error)
        if health != self.health or health_error != self.health_error:
            if health_error and health_error != self.health_error:
                log.error("%s", health_error)
            self.health, self.health_error = health, health_error
            self.state.version += 1

    def snapshot(self) -> bytes:
        """The page's data as JSON, built once per change however many pages are open."""
        with self.lock:
            version, encoded = self._encoded
            if version != self.state.version:
                view = self.state.snapshot(self.max_points)
                view["source"] = self.source.describe()
                view["health"] = {"metrics": self.health, "error": self.health_error, "url": self.metrics_url}
                self._encoded = version, encoded = self.state.version, orjson.dumps(view)
        return encoded


def create_app(feed: Feed) -> Starlette:
    """The app over one feed, polling it in the background while it serves."""

    async def page(_request: Request) -> Response:
        return Response(_asset("index.html"), media_type="text/html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name == "plotly.min.js":
            return Response(_plotly_js(), media_type="text/javascript", headers={"Cache-Control": "max-age=86400"})
        if name not in STATIC:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(_asset(name), media_type=STATIC[name])

    async def snapshot(_request: Request) -> Response:
        return Response(feed.snapshot(), media_type="application/json")

    async def alert(request: Request) -> Response:
        record = feed.state.alerts_by_id.get(request.path_params["alert_id"])
        if record is None:
            return JSONResponse({"error": f"no alert {request.path_params['alert_id']!r} has been read"}, status_code=404)
        return Response(orjson.dumps(record, option=orjson.OPT_INDENT_2), media_type="application/json")

    async def stream(request: Request) -> StreamingResponse:
        async def events() -> AsyncIterator[bytes]:
            sent, quiet = -1, 0.0
            while not feed.stopping and not await request.is_disconnected():
                if feed.state.version != sent:
                    sent, quiet = feed.state.version, 0.0
                    yield b"data: " + feed.snapshot() + b"\n\n"
                elif quiet >= KEEP_ALIVE_SECONDS:
                    quiet = 0.0
                    yield b": keep-alive\n\n"
                await asyncio.sleep(PUSH_SECONDS)
                quiet += PUSH_SECONDS

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async def poll_forever() -> None:
            while True:
                await asyncio.to_thread(feed.poll)
                await asyncio.sleep(feed.poll_seconds)

        task = asyncio.create_task(poll_forever())
        try:
            yield
        finally:
            task.cancel()

    routes = [
        Route("/", page),
        Route("/static/{name}", static),
        Route("/api/snapshot", snapshot),
        Route("/api/stream", stream),
        Route("/api/alerts/{alert_id}", alert),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def _asset(name: str) -> bytes:
    return resources.files("fairstream.dashboard").joinpath("static", name).read_bytes()


def _plotly_js() -> bytes:
    """plotly.js as the installed plotly package ships it."""
    return resources.files("plotly").joinpath("package_data", "plotly.min.js").read_bytes()
