"""A TLS front for the test broker: tansu serves plaintext only, so an asyncio proxy terminates TLS (certificates made
by trustme for this run) and pipes each connection to tansu, which advertises the proxy as its address."""

from __future__ import annotations

import asyncio
import ssl
import threading
from pathlib import Path

import trustme

from fairstream.connectors.broker import LocalBroker, free_port


class TlsProxy:
    """Accepts TLS on `port` (127.0.0.1) and forwards the plaintext to `target_port`; runs in a thread of its own."""

    def __init__(self, context: ssl.SSLContext, target_port: int, port: int):
        self.context, self.target_port, self.port = context, target_port, port
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> TlsProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.set_exception_handler(lambda loop, context: None)  # handshakes that plaintext clients fail
        self._loop.run_until_complete(asyncio.start_server(self._forward, "127.0.0.1", self.port, ssl=self.context))
        self._ready.set()
        self._loop.run_forever()

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer), return_exceptions=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


class TlsBroker:
    """A tansu broker reachable only through TLS at `bootstrap` (localhost), with its CA written to `ca_path`."""

    def __init__(self, folder: Path):
        self.ca = trustme.CA()
        self.ca_path = folder / "ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_path))
        self.port = free_port()
        self.broker = LocalBroker(advertised=f"localhost:{self.port}")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("localhost", "127.0.0.1").configure_cert(context)
        self.proxy = TlsProxy(context, self.broker.port, self.port)

    @property
    def bootstrap(self) -> str:
        return f"localhost:{self.port}"

    def __enter__(self) -> TlsBroker:
        self.broker.start()
        self.proxy.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.proxy.stop()
        self.broker.stop()
