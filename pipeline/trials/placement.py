"""Where a dependence key belongs: the input partition a producer's partitioner puts it on, to catch an event that
arrived on another one (`wrong_partition`) when trials are kept where their partition is read (pure)."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Literal

Partitioner = Literal["murmur2", "crc32", "none"]

try:
    from fairstream.trials.murmur import murmur2_partitions
except ImportError:  # installed without a C compiler

    def murmur2_partitions(keys: list[str], partitions: int) -> list[int]:
        """The partition of each key on a topic of `partitions` partitions, as Kafka's Java client places it."""
        return [(murmur2(key.encode()) & 0x7FFFFFFF) % partitions for key in keys]


def murmur2(data: bytes) -> int:
    """Kafka's 32-bit murmur2 of a key's bytes (seed 0x9747b28c), unsigned."""
    length, m = len(data), 0x5BD1E995
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    end = length & ~3
    for i in range(0, end, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    extra = length & 3
    if extra == 3:
        h ^= data[end + 2] << 16
    if extra >= 2:
        h ^= data[end + 1] << 8
    if extra >= 1:
        h ^= data[end]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    return h ^ (h >> 15)


def crc32_partitions(keys: list[str], partitions: int) -> list[int]:
    """The partition of each key as librdkafka's default (`consistent_random`) partitioner places it."""
    return [zlib.crc32(key.encode()) % partitions for key in keys]


PARTITIONERS: dict[str, Callable[[list[str], int], list[int]]] = {"murmur2": murmur2_partitions, "crc32": crc32_partitions}


def partitions_of(partitioner: Partitioner, partitions: int) -> Callable[[list[str]], list[int]] | None:
    """The partitions a batch of keys belongs to, or None where nothing is to check (no partitioner, one partition)."""
    if partitioner == "none" or partitions <= 1:
        return None
    place = PARTITIONERS[partitioner]
    return lambda keys: place(keys, partitions)
