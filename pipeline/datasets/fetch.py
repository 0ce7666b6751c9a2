"""Fetch a data set from its source (or a mirror) into the cache, checked by sha256 before it is kept."""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from fairstream.datasets.catalog import DataSet
from fairstream.datasets.german import recode
from fairstream.records.errors import InputError

TIMEOUT_S = 30.0
"""How long a connection or a read may stall before the fetch gives up."""
CHUNK = 1 << 16


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, on_size: Callable[[int | None], None] = lambda _total: None, on_bytes: Callable[[int], None] = lambda _n: None) -> bytes:
    """The body at `url` (http, https or file); one line naming the URL and the cause when it cannot be read."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:  # noqa: S310 (the catalog's URLs or the user's mirror)
            length = response.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            on_size(expected)
            parts = []
            while block := response.read(CHUNK):
                parts.append(block)
                on_bytes(len(block))
            body = b"".join(parts)
    except urllib.error.HTTPError as err:
        raise InputError(f"could not fetch {url}: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        raise InputError(f"could not fetch {url}: {str(reason) or type(reason).__name__}") from None
    if expected is not None and len(body) != expected:
        raise InputError(f"could not fetch {url}: the connection closed after {len(body):,} of {expected:,} bytes")
    return body


def fetch(
    data: DataSet,
    into: Path,
    url: str | None = None,
    on_size: Callable[[int | None], None] = lambda _total: None,
    on_bytes: Callable[[int], None] = lambda _n: None,
) -> tuple[Path, bool]:
    """The data set's file in `into` and whether it was fetched now (False: a copy with the right sha256 was there).

    The body is recoded where the data set says so, and kept only when its sha256 is the catalog's: a changed
    source, a truncated transfer or a wrong mirror leaves nothing behind and says which checksum it got."""
    target = into / data.file
    if target.is_file() and sha256_of(target) == data.sha256:
        return target, False
    source = url or data.url
    body = download(source, on_size, on_bytes)
    if data.recode == "uci-german":
        body = recode(body.decode("latin-1")).encode()
    got = hashlib.sha256(body).hexdigest()
    if got != data.sha256:
        raise InputError(f"{source} is not the {data.title} file fairstream knows: sha256 {got}, expected {data.sha256}; nothing was kept")
    into.mkdir(parents=True, exist_ok=True)
    part = into / f".{data.file}.{os.getpid()}.part"
    part.write_bytes(body)
    os.replace(part, target)  # whole or not at all, even with two fetches at once
    return target, True
