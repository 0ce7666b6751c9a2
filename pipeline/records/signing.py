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


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ModuleNotFoundError:
        raise UsageError("signing records needs the cryptography package: pip install 'fairstream[audit]'") from None
    return serialization


def load_private_key(path: str | Path) -> Any:
    """An Ed25519 private key from a PEM file (unencrypted PKCS#8, as `openssl genpkey -algorithm ed25519` writes it)."""
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as err:
        raise UsageError(f"cannot read the signing key {path}: {getattr(err, 'strerror', None) or err}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise UsageError(f"the signing key {path} is not an Ed25519 key (make one with: openssl genpkey -algorithm ed25519)")
    return key


def load_public_key(path: str | Path) -> Any:
    """An Ed25519 public key from a PEM file (`openssl pkey -in key.pem -pubout`)."""
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(Path(path).read_bytes())
    except (OSError, ValueError, TypeError) as err:
        raise UsageError(f"cannot read the public key {path}: {getattr(err, 'strerror', None) or err}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise UsageError(f"the public key {path} is not an Ed25519 key")
    return key


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
