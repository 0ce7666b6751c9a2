"""A server's listening socket, bound before anything starts, so a port in use is one clear error (I/O)."""

from __future__ import annotations

import socket

from fairstream.records.errors import ConnectorError


def listen(host: str, port: int, *, backlog: int = 128) -> socket.socket:
    """A TCP socket bound to `host`:`port` (IPv6 where the host has a colon) and listening, `backlog` connections queued.
    Its protocol is named, so asyncio turns Nagle's algorithm off on the connections it accepts: a response written in
    two parts would otherwise wait for the caller's delayed acknowledgement (40 ms on Linux) on every kept-alive call."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as err:
        listener.close()
        raise ConnectorError(f"cannot serve on {host}:{port}: {err.strerror}") from None
    listener.listen(backlog)
    return listener
