"""Ed25519 signatures of the records' chain hashes, where a job is given a signing key (the `audit` extra installs the
`cryptography` package they need). A signature covers the hash, which covers the record: whoever holds the public key
can tell the records this job wrote from a rewritten stream, which a hash chain alone cannot."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fairstream.records.errors import UsageError

_key: Any = None
"""This process's private key while a signing job runs."""


def _load_key(path: str | Path, which: str) -> Any:
    """An Ed25519 key of the PEM file at `path`: `private` (unencrypted PKCS#8) or `public`."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
    except ModuleNotFoundError:
        raise UsageError("signing records needs the cryptography package: pip install 'fairstream[audit]'") from None
    role = "signing key" if which == "private" else "public key"
    try:
        data = Path(path).read_bytes()
        key = serialization.load_pem_private_key(data, password=None) if which == "private" else serialization.load_pem_public_key(data)
    except (OSError, ValueError, TypeError) as err:
        raise UsageError(f"cannot read the {role} {path}: {getattr(err, 'strerror', None) or err}") from None
    if not isinstance(key, Ed25519PrivateKey if which == "private" else Ed25519PublicKey):
        raise UsageError(f"the {role} {path} is not an Ed25519 key (make one with: openssl genpkey -algorithm ed25519)")
    return key


def load_private_key(path: str | Path) -> Any:
    """An Ed25519 private key from a PEM file (unencrypted PKCS#8, as `openssl genpkey -algorithm ed25519` writes it)."""
    return _load_key(path, "private")


def load_public_key(path: str | Path) -> Any:
    """An Ed25519 public key from a PEM file (`openssl pkey -in key.pem -pubout`)."""
    return _load_key(path, "public")


@contextmanager
def signing(path: str | None) -> Iterator[None]:
    """Sign this process's records with the key at `path` while the block runs (nothing when None)."""
    global _key
    if path is None:
        yield
        return
    _key = load_private_key(path)
    try:
        yield
    finally:
        _key = None


def signature(digest: str) -> str | None:
    """The base64 Ed25519 signature of a record's hash, or None when no key is set."""
    return None if _key is None else base64.b64encode(_key.sign(bytes.fromhex(digest))).decode()


def signed_by(public_key: Any, digest: str, sig: str) -> bool:
    from cryptography.exceptions import InvalidSignature

    try:
        public_key.verify(base64.b64decode(sig), bytes.fromhex(digest))
    except (InvalidSignature, ValueError):
        return False
    return True
