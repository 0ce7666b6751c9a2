"""Values of the group's topics of any size: compressed, then cut into messages a broker takes (`CHUNK_BYTES`), each
headed by its place and the count; read back whole, a value missing a part never.

Steps keep their partition as the key: a step's parts follow each other in its partition's order. Checkpoints name
each part (`<name>/<step>/<part>`), so a compacted topic keeps every part of the latest, and the parts of the one
before are deleted (tombstones) once it is written.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

CHUNK_BYTES = 900_000
"""Bytes of a value in one message: under the 1 MB that Kafka brokers and librdkafka take by default."""

_HEAD = struct.Struct(">II")


def chunks(value: bytes, size: int = CHUNK_BYTES) -> list[bytes]:
    """The messages that carry `value`: its compressed bytes in parts, each headed by (place, count)."""
    packed = zlib.compress(value, 1)
    parts = [packed[start : start + size] for start in range(0, len(packed), size)] or [b""]
    return [_HEAD.pack(place, len(parts)) + part for place, part in enumerate(parts)]


def head(message: bytes) -> tuple[int, int]:
    """A part's place and the count of its value's parts."""
    return _HEAD.unpack_from(message)


def joined(parts: list[bytes]) -> bytes:
    """The value of all its parts, in order."""
    return zlib.decompress(b"".join(part[_HEAD.size :] for part in parts))


class Joiner:
    """Values of several writers (keys), each sent as consecutive parts: a value is whole at its last part; parts that
    do not follow on (a writer that died mid-value and started again) are dropped."""

    def __init__(self) -> None:
        self._parts: dict[bytes, tuple[int, list[bytes]]] = {}

    def add(self, key: bytes, message: bytes, offset: int = 0) -> bytes | None:
        """The whole value `message` completes, else None (`offset`: the message's, see `earliest_open`)."""
        place, count = head(message)
        first, parts = (offset, []) if place == 0 else self._parts.get(key, (offset, []))
        if len(parts) != place:
            self._parts.pop(key, None)
            return None
        parts.append(message)
        if place + 1 < count:
            self._parts[key] = (first, parts)
            return None
        self._parts.pop(key, None)
        return joined(parts)

    def earliest_open(self) -> int | None:
        """The offset of the first part of the earliest value not yet whole: where a reader that stops now goes on."""
        return min((first for first, _parts in self._parts.values()), default=None)


def part_keys(name: str, step: int, count: int) -> Iterator[bytes]:
    """The keys of a checkpoint's parts on a compacted topic."""
    return (f"{name}/{step}/{place}".encode() for place in range(count))


def latest_values(messages: list[tuple[bytes | None, bytes | None]]) -> dict[str, tuple[int, int, bytes]]:
    """The newest whole checkpoint of each name, from a compacted topic's messages (tombstones delete a part), as
    (its step, its count of parts, its value)."""
    found: dict[bytes, bytes] = {}
    for key, value in messages:
        if key is None:
            continue
        if value is None:
            found.pop(key, None)
        else:
            found[key] = value
    by_name: dict[str, dict[int, dict[int, bytes]]] = {}
    for key, value in found.items():
        name, _, rest = key.decode().partition("/")
        if not rest:
            continue
        step, _, place = rest.partition("/")
        by_name.setdefault(name, {}).setdefault(int(step), {})[int(place)] = value
    latest: dict[str, tuple[int, int, bytes]] = {}
    for name, steps in by_name.items():
        for step in sorted(steps, reverse=True):
            parts = steps[step]
            count = head(next(iter(parts.values())))[1]
            if sorted(parts) == list(range(count)):
                latest[name] = (step, count, joined([parts[place] for place in range(count)]))
                break
    return latest
