"""The served shield's HTTP interface: `POST /decisions` answers one decision record with its shielded record;
`/metrics`, `/healthz` and `/readyz` as a run serves them (I/O).

A body is read within `BODY_SECONDS` and up to `input.max_record_bytes`, else refused unread (408, 413): a slow or
endless client holds no decision and no memory. A decision is made once its body is read; a caller that hangs up after
that still finds it in the records.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from fairstream import metrics
from fairstream.serving.record_writers import SYNC_SECONDS
from fairstream.serving.shield_service import ShieldService

BODY_SECONDS = 10.0
"""Seconds a request may take to send its body."""
log = logging.getLogger("fairstream.shield")


class _TooLarge(Exception):
    def __init__(self, read: bytes):
        self.read = read


async def _body(request: Request, limit: int) -> bytes:
    """The request's body, or `_TooLarge` with what was read once it passes `limit` bytes."""
    chunks, size = [], 0
    async for chunk in request.stream():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _TooLarge(b"".join(chunks))
    return b"".join(chunks)


def create_app(service: ShieldService) -> Starlette:
    """The app around `service`; its records are synced to disk every `SYNC_SECONDS`, and closed with the app."""

    async def decisions(request: Request) -> Response:
        if service.closed:
            return JSONResponse({"reason": "stopping", "detail": "the shield is stopping"}, 503)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > service.max_bytes:
            answer = service.too_large(int(declared), b"")
            return Response(answer.body, answer.status, media_type="application/json", headers={"Connection": "close"})
        try:
            body = await asyncio.wait_for(_body(request, service.max_bytes), BODY_SECONDS)
        except TimeoutError:
            return JSONResponse({"reason": "timeout", "detail": f"the body did not arrive within {BODY_SECONDS:g} s"}, 408, headers={"Connection": "close"})
        except _TooLarge as large:
            answer = service.too_large(len(large.read), large.read[:4096])
            return Response(answer.body, answer.status, media_type="application/json", headers={"Connection": "close"})
        except ClientDisconnect:
            return Response(status_code=400)  # nobody is there to read it; no decision was made
        answer = service.answer(body)
        return Response(answer.body, answer.status, media_type="application/json")

    async def metrics_page(_request: Request) -> Response:
        return Response(generate_latest(metrics.REGISTRY), media_type=CONTENT_TYPE_LATEST)

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"healthy": True})

    async def readyz(_request: Request) -> Response:
        return JSONResponse({"ready": not service.closed}, 503 if service.closed else 200)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async def sync() -> None:
            while True:
                await asyncio.sleep(SYNC_SECONDS)
                service.writer.sync()

        syncing = asyncio.create_task(sync())
        try:
            yield
        finally:
            syncing.cancel()
            service.close()

    routes = [
        Route("/decisions", decisions, methods=["POST"]),
        Route("/metrics", metrics_page, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
